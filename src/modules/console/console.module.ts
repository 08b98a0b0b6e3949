import { defineModule } from '../../kernel/module.ts';
import { consoleEndpoints } from './console.routes.ts';

export const consoleModule = defineModule({
  name: 'console',
  required: false,
  description: 'Admin console at /admin',
  forms: ['A', 'B', 'FULL'],
  endpoints: consoleEndpoints,
});
