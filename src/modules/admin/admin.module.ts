import { defineModule } from '../../kernel/module.ts';
import { adminEndpoints } from './admin.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    admin: true;
  }
}

export const adminModule = defineModule({
  name: 'admin',
  required: true,
  description: 'Run-time module switches',
  forms: ['A', 'B', 'FULL'],
  endpoints: adminEndpoints,
});
