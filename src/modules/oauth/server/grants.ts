import type { KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../../kernel/context.types.ts';
import { clientPolicy, OIDC_SCOPES } from '../clients/clients.service.ts';
import { consentOf } from './consents.service.ts';
import { browserSessionOf, linkBrowserSession, openGrant, requestClientOf } from './grant-sessions.ts';

const asList = (value: unknown): string[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value.map(String) : [String(value)];

/** What the hosted sign-in adds to the library's interaction result (interactions.service.ts). */
export interface SignInResult {
  login?: { accountId: string };
  /** The Gatehouse session the hosted sign-in used: the browser session is tied to it. */
  gatehouse?: { session_id?: string };
}

/**
 * oidc-provider's `loadExistingGrant` (docs/api.md §17, "Sign-in and consent"): a first-party
 * client gets everything it asked for within its registration, never a consent page; any other
 * client gets what the user allowed it before (the `oauth_consents` table), so the library asks
 * only for what is new; a third-party native client gets nothing stored and is asked every time.
 * A new grant opens its Gatehouse session (grant-sessions.ts); a grant of this browser session
 * that has ended is not replaced silently: the login check of policy.ts asks for a sign-in first.
 */
export function loadExistingGrant(ctx: AppContext) {
  return async (kctx: KoaContextWithOIDC) => {
    const { oidc } = kctx;
    const clientId: string = oidc.client.clientId;
    const accountId: string | undefined = oidc.session?.accountId;
    const result: SignInResult | undefined = oidc.result;
    const signedIn = result?.login !== undefined;
    const linked = result?.gatehouse?.session_id;
    if (accountId !== undefined && signedIn && linked !== undefined) {
      await linkBrowserSession(ctx, oidc.session.uid, linked);
    }
    const resultGrantId: string | undefined = oidc.result?.consent?.grantId;
    const sessionGrantId: string | undefined = oidc.session?.grantIdFor(clientId);
    const grantId = resultGrantId ?? sessionGrantId;
    let grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
    if (accountId === undefined) return grant;
    if (!grant && sessionGrantId !== undefined && resultGrantId === undefined && !signedIn) return undefined;
    const policy = await clientPolicy(ctx, clientId);
    if (policy === null) return grant;
    const thirdPartyNative = !policy.first_party && policy.application_type === 'native';
    if (thirdPartyNative) return resultGrantId === undefined ? undefined : grant;
    const scopes: string[] = [];
    const resources: Record<string, string[]> = {};
    if (policy.first_party) {
      const oidcScopes: readonly string[] = OIDC_SCOPES;
      const asked = asList(oidc.params.scope?.split(' '));
      scopes.push(...asked.filter((s) => oidcScopes.includes(s) && policy.scopes.includes(s)));
      for (const identifier of asList(oidc.params.resource)) {
        if (!policy.resources.includes(identifier)) continue;
        resources[identifier] = asked.filter((s) => !oidcScopes.includes(s) && policy.scopes.includes(s));
      }
    } else {
      const consent = await consentOf(ctx, accountId, clientId);
      if (consent !== null) {
        scopes.push(...consent.scopes);
        Object.assign(resources, consent.resources);
      }
    }
    const granted = scopes.length > 0 || Object.values(resources).some((list) => list.length > 0);
    // Nothing allowed yet: the consent step makes the grant (and its session), or nothing does.
    if (!grant && !granted) return undefined;
    grant ??= await openGrant(ctx, oidc.provider, {
      accountId,
      clientId,
      parentId: (await browserSessionOf(ctx, oidc.session.uid)) ?? null,
      amr: asList(oidc.session.amr),
      loginTs: Number(oidc.session.loginTs ?? Math.floor(Date.now() / 1000)),
      client: requestClientOf(kctx.req),
    });
    if (scopes.length > 0) grant.addOIDCScope(scopes.join(' '));
    for (const [identifier, list] of Object.entries(resources)) {
      if (list.length > 0) grant.addResourceScope(identifier, list.join(' '));
    }
    await grant.save();
    return grant;
  };
}
