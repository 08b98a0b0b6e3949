import { defineModule } from '../../kernel/module.ts';
import { emailEndpoints } from './email.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    email: true;
  }
}

export const emailModule = defineModule({
  name: 'email',
  required: false,
  description: 'E-mail address verification and change',
  forms: ['FULL'],
  endpoints: emailEndpoints,
});
