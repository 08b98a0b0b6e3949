import { defineModule } from '../../kernel/module.ts';
import { consoleEndpoints } from './console.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    console: true;
  }
}

export const consoleModule = defineModule({
  name: 'console',
  required: false,
  description: 'Admin console at /admin',
  forms: ['A', 'B', 'FULL'],
  endpoints: consoleEndpoints,
});
