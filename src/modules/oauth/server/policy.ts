import { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../../kernel/context.types.ts';
import { clientPolicy } from '../clients/clients.service.ts';
import { organizationChecks } from './organization-policy.ts';

/**
 * The library's interaction policy with two changes (docs/api.md §17): its "native clients are
 * asked every time" check (RFC 8252 §8.6, `interaction_required` under `prompt=none`) spares
 * first-party clients, which never see a consent page; and a browser session whose grant for this
 * client has ended (its Gatehouse session was revoked) signs in again (`login_required` under
 * `prompt=none`) rather than getting a new grant silently.
 */
export function interactionPolicyFor(ctx: AppContext) {
  const policy = interactionPolicy.base();
  policy.get('login').checks.push(
    new interactionPolicy.Check(
      'grant_ended',
      'the session of this application has ended',
      'login_required',
      async (kctx: KoaContextWithOIDC) => {
        const { oidc } = kctx;
        if (!oidc.session.accountId || oidc.result?.login) return false;
        const grantId: string | undefined = oidc.session.grantIdFor(oidc.client.clientId);
        if (grantId === undefined || oidc.result?.consent?.grantId !== undefined) return false;
        return (await oidc.provider.Grant.find(grantId)) === undefined;
      },
    ),
  );
  const consent = policy.get('consent');
  const at = consent.checks.findIndex((c: { reason: string }) => c.reason === 'native_client_prompt');
  consent.checks.remove('native_client_prompt');
  consent.checks.splice(
    Math.max(at, 0),
    0,
    new interactionPolicy.Check(
      'native_client_prompt',
      'native clients require End-User interaction',
      'interaction_required',
      async (kctx: KoaContextWithOIDC) => {
        const { oidc } = kctx;
        if (oidc.client.applicationType !== 'native' || oidc.result?.consent) return false;
        return (await clientPolicy(ctx, oidc.client.clientId))?.first_party !== true;
      },
    ),
  );
  // docs/api.md §21: an organization asked for needs a member (the `organization` prompt's page
  // refuses anyone else) and, for a `require_mfa` one, a second factor in the sign-in.
  const { secondFactor, organization } = organizationChecks(ctx);
  policy.get('login').checks.push(secondFactor);
  policy.add(
    organization,
    policy.findIndex((p: { name: string }) => p.name === 'consent'),
  );
  return policy;
}
