import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { ProblemSchema } from '../../http/problem.schemas.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { coreHealth } from '../health/index.ts';
import { metricsEndpoints } from './metrics.routes.ts';

const Core = Type.Object({
  module: Type.Literal('core'),
  status: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
  database: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
  migrations: Type.Object({ applied: Type.Integer(), pending: Type.Integer() }),
});

/** core.health (docs/api.md §4), and the unlisted `/metrics`. */
export function coreEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'core',
      label: 'health',
      method: 'GET',
      path: '/api/v1/core/health',
      access: 'public',
      summary: 'Database reachability and migration state',
      // 503 is also the load-shedding problem (docs/operations.md, "Readiness"): serialized with
      // the answer's schema alone it failed, and the check answered 500.
      schema: { response: { 200: Core, 503: Type.Union([Core, ProblemSchema]) } },
      statusOf: (body) => (body.status === 'ok' ? 200 : 503),
      handler: () => coreHealth(ctx),
    }),
    ...metricsEndpoints(ctx),
  ];
}
