import { defineModule } from '../../kernel/module.ts';
import { accountEndpoints } from './account.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    account: true;
  }
}

export const accountModule = defineModule({
  name: 'account',
  required: false,
  description: 'Self-service profile and password change',
  forms: ['A', 'FULL'],
  endpoints: accountEndpoints,
});
