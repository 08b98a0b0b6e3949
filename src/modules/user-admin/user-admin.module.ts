import { defineModule } from '../../kernel/module.ts';
import { userAdminEndpoints } from './user-admin.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    user_admin: true;
  }
}

export const userAdminModule = defineModule({
  name: 'user_admin',
  required: false,
  description: 'Admin creation and deletion of users',
  forms: ['A', 'FULL'],
  endpoints: userAdminEndpoints,
});
