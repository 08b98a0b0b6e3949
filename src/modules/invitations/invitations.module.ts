import { defineModule } from '../../kernel/module.ts';
import { invitationEndpoints } from './invitations.routes.ts';

export const invitationsModule = defineModule({
  name: 'invitations',
  required: false,
  description: 'Invitation onboarding by e-mail',
  forms: ['B', 'FULL'],
  endpoints: invitationEndpoints,
});
