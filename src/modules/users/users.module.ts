import { defineModule } from '../../kernel/module.ts';
import { usersEndpoints } from './users.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    users: true;
  }
}

export const usersModule = defineModule({
  name: 'users',
  required: true,
  description: 'User listing, search, statistics and updates',
  forms: ['A', 'B', 'FULL'],
  endpoints: usersEndpoints,
});
