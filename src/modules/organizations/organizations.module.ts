import { defineModule } from '../../kernel/module.ts';
import { joinByDomainListener } from './domain-join.ts';
import { invitationEndpoints } from './invitations/invitations.routes.ts';
import { memberEndpoints } from './members.routes.ts';
import { organizationEndpoints } from './organizations.routes.ts';
import { roleEndpoints } from './roles.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    organizations: true;
  }
}

/** docs/api.md §21: organizations, the role catalogue, members and (in invitations/) invitations. */
export const organizationsModule = defineModule({
  name: 'organizations',
  required: false,
  description: 'Organizations (tenants), roles and permissions',
  forms: ['FULL'],
  // Joining by domain acts on every sign-in through the pipeline's one extension point.
  start: (ctx) => {
    ctx.signIn.onSessionOpened(joinByDomainListener(ctx));
  },
  endpoints: (ctx, modules) => [
    ...roleEndpoints(ctx),
    ...organizationEndpoints(ctx, modules),
    ...memberEndpoints(ctx),
    ...invitationEndpoints(ctx),
  ],
});
