import { defineModule } from '../../kernel/module.ts';
import { healthEndpoints } from './health.routes.ts';

export const healthModule = defineModule({
  name: 'health',
  required: true,
  description: 'Liveness and dependency health checks',
  forms: ['A', 'B', 'FULL'],
  endpoints: healthEndpoints,
});
