import type { ClientInfo } from '../../identity/index.ts';
import { defineModule } from '../../kernel/module.ts';
import type { Db } from '../../platform/db/schema.ts';
import { scimOrganization } from '../organizations/index.ts';
import { pruneAssertionUses } from '../providers/index.ts';
import { scimEndpoints } from './scim/scim.routes.ts';
import { reapplyGroupRoles } from './scim/scim-lifecycle.ts';
import { ssoEndpoints } from './sso.routes.ts';
import { ssoRequiredCheck } from './sso-required.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    sso: true;
  }
  interface ModuleOffers {
    /**
     * docs/api.md §23: organizations.update calls this, in its transaction, when an organization's
     * `scim_group_roles` changed, so the roles its SCIM groups grant are re-applied to the members.
     */
    sso: { groupRolesChanged(trx: Db, organizationId: string, client: ClientInfo | null): Promise<void> };
  }
}

/**
 * Enterprise single sign-on (docs/api.md §23): SAML 2.0 connections (providers of kind `saml`),
 * their SP metadata and assertion consumer, home-realm discovery, and SCIM 2.0 provisioning
 * (scim/). Needs `providers` and
 * `organizations`.
 */
export const ssoModule = defineModule({
  name: 'sso',
  required: false,
  description: 'Enterprise single sign-on: SAML 2.0 connections and home-realm discovery',
  forms: ['FULL'],
  endpoints: (ctx) => [...ssoEndpoints(ctx), ...scimEndpoints(ctx)],
  start: (ctx) => {
    // docs/api.md §23 sso_required: one address check the sign-in pipeline and the endpoints before a
    // sign-in ask (ctx.signIn.checkAddress); it acts only while the module is on.
    ctx.signIn.onAddressCheck(ssoRequiredCheck(ctx));
    return undefined;
  },
  offer: () => ({
    groupRolesChanged: async (trx, organizationId, client) => {
      const org = await scimOrganization(trx, organizationId);
      if (org) await reapplyGroupRoles(trx, org, client);
    },
  }),
  jobs: [
    // Used assertion ids past their NotOnOrAfter + 60 s guard nothing; idempotent on every instance.
    { name: 'sso.prune', what: 'used SAML assertion pruning', everyMs: 10 * 60_000, run: pruneAssertionUses },
  ],
});
