import { defineModule } from '../../kernel/module.ts';
import { healthEndpoints } from './health.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    health: true;
  }
}

export const healthModule = defineModule({
  name: 'health',
  required: true,
  description: 'Liveness and dependency health checks',
  forms: ['A', 'B', 'FULL'],
  endpoints: healthEndpoints,
});
