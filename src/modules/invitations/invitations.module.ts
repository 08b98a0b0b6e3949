import { defineModule } from '../../kernel/module.ts';
import { invitationEndpoints } from './invitations.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    invitations: true;
  }
}

export const invitationsModule = defineModule({
  name: 'invitations',
  required: false,
  description: 'Invitation onboarding by e-mail',
  forms: ['B', 'FULL'],
  endpoints: invitationEndpoints,
});
