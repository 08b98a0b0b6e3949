import type { KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../context.ts';
import { clientPolicy, OIDC_SCOPES } from './clients.service.ts';
import { consentOf } from './consents.service.ts';

const asList = (value: unknown): string[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value.map(String) : [String(value)];

/**
 * oidc-provider's `loadExistingGrant` (docs/api.md §17, "Sign-in and consent"): a first-party
 * client gets everything it asked for within its registration, never a consent page; any other
 * client gets what the user allowed it before (the `oauth_consents` table), so the library asks
 * only for what is new; a third-party native client gets nothing stored and is asked every time.
 */
export function loadExistingGrant(ctx: AppContext) {
  return async (kctx: KoaContextWithOIDC) => {
    const { oidc } = kctx;
    const clientId: string = oidc.client.clientId;
    const accountId: string | undefined = oidc.session?.accountId;
    const resultGrantId: string | undefined = oidc.result?.consent?.grantId;
    const grantId: string | undefined = resultGrantId ?? oidc.session?.grantIdFor(clientId);
    let grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
    if (accountId === undefined) return grant;
    const policy = await clientPolicy(ctx, clientId);
    if (policy === null) return grant;
    const thirdPartyNative = !policy.first_party && policy.application_type === 'native';
    if (thirdPartyNative) return resultGrantId === undefined ? undefined : grant;
    grant ??= new oidc.provider.Grant({ clientId, accountId });
    if (policy.first_party) {
      const oidcScopes: readonly string[] = OIDC_SCOPES;
      const asked = asList(oidc.params.scope?.split(' '));
      const scopes = asked.filter((s) => oidcScopes.includes(s) && policy.scopes.includes(s));
      if (scopes.length > 0) grant.addOIDCScope(scopes.join(' '));
      for (const identifier of asList(oidc.params.resource)) {
        if (!policy.resources.includes(identifier)) continue;
        const apiScopes = asked.filter((s) => !oidcScopes.includes(s) && policy.scopes.includes(s));
        if (apiScopes.length > 0) grant.addResourceScope(identifier, apiScopes.join(' '));
      }
    } else {
      const consent = await consentOf(ctx, accountId, clientId);
      if (consent !== null) {
        if (consent.scopes.length > 0) grant.addOIDCScope(consent.scopes.join(' '));
        for (const [identifier, scopes] of Object.entries(consent.resources)) {
          if (scopes.length > 0) grant.addResourceScope(identifier, scopes.join(' '));
        }
      }
    }
    await grant.save();
    return grant;
  };
}
