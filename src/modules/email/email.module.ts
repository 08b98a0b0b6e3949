import { defineModule } from '../../kernel/module.ts';
import { emailEndpoints } from './email.routes.ts';

export const emailModule = defineModule({
  name: 'email',
  required: false,
  description: 'E-mail address verification and change',
  forms: ['FULL'],
  endpoints: emailEndpoints,
});
