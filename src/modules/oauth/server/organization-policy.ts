import { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
import { amrHasSecondFactor } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { membershipIn } from '../../organizations/index.ts';
import { askedOrganization } from './organization-tokens.ts';

/** The reason of the login check a `require_mfa` organization adds (interactions.service.ts reads it). */
export const ORGANIZATION_MFA = 'organization_mfa';
/** The prompt whose hosted page says the person is not a member (and offers only "Back to <client>"). */
export const ORGANIZATION_PROMPT = 'organization';

/** The membership an authorization request asks to act in, for its signed-in account. */
async function asked(ctx: AppContext, kctx: KoaContextWithOIDC) {
  const { oidc } = kctx;
  const organizationId = askedOrganization(oidc.params);
  const accountId: string | undefined = oidc.session?.accountId;
  if (organizationId === null || accountId === undefined || !ctx.modules.isEnabled('organizations')) {
    return undefined;
  }
  return { membership: await membershipIn(ctx, organizationId, accountId) };
}

/**
 * The interaction policy's organization checks (docs/api.md §21, "require_mfa" and "Refused
 * organization on the hosted page"), documented extension points of the library:
 * - in the login prompt, a member of a `require_mfa` organization signed in without a second factor
 *   signs in again with one (`login_required` under `prompt=none`);
 * - a prompt of its own for a non-member: the hosted page says so, and its one button answers the
 *   client `access_denied` (so does `prompt=none`).
 */
export function organizationChecks(ctx: AppContext) {
  const secondFactor = new interactionPolicy.Check(
    ORGANIZATION_MFA,
    'the organization requires a second factor',
    'login_required',
    async (kctx: KoaContextWithOIDC) => {
      const found = await asked(ctx, kctx);
      if (!found?.membership?.require_mfa) return false;
      return !amrHasSecondFactor(kctx.oidc.session.amr as string[] | undefined);
    },
  );
  const organization = new interactionPolicy.Prompt(
    { name: ORGANIZATION_PROMPT, requestable: false },
    new interactionPolicy.Check(
      'not_a_member',
      'the user is not a member of the organization',
      'access_denied',
      async (kctx: KoaContextWithOIDC) => {
        const found = await asked(ctx, kctx);
        return found !== undefined && found.membership === null;
      },
    ),
  );
  return { secondFactor, organization };
}
