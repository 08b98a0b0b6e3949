import { defineModule } from '../../kernel/module.ts';
import { registrationEndpoints } from './registration.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    registration: true;
  }
}

/** Off in every form, `full` included: public sign-up is a deliberate policy. */
export const registrationModule = defineModule({
  name: 'registration',
  required: false,
  description: 'Public self sign-up',
  forms: [],
  endpoints: registrationEndpoints,
});
