import { defineModule } from '../../kernel/module.ts';
import { cursorCodecFor, usersEndpoints } from './users.routes.ts';

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
  // The cursor key, read from the database at the first page asked for.
  start: cursorCodecFor,
  endpoints: usersEndpoints,
});
