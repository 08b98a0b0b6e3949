import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { ProblemSchema } from '../../http/problem.schemas.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { VERSION } from '../../platform/version.ts';
import { detailedHealth } from './health.service.ts';

const Check = Type.Object({ status: Type.String() }, { additionalProperties: true });

const Detailed = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')]),
  version: Type.String(),
  uptime_s: Type.Number(),
  checks: Type.Record(Type.String(), Check),
  modules: Type.Record(Type.String(), Type.Boolean()),
});

// Liveness touches nothing: a constant answer, serialized by the route's compiled schema.
const OK = { status: 'ok' as const };

/** health.basic and health.detailed (docs/api.md §4). */
export function healthEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'health',
      label: 'basic',
      method: 'GET',
      path: '/health',
      access: 'public',
      summary: 'Liveness: answers without touching the database',
      schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
      handler: () => OK,
    }),
    endpoint({
      group: 'health',
      label: 'detailed',
      method: 'GET',
      path: '/health/detailed',
      access: 'public',
      summary: 'Dependency checks, module switches, version and uptime',
      // 503 is also the load-shedding problem (docs/operations.md, "Readiness"): serialized with
      // the answer's schema alone it failed, and the check answered 500.
      schema: { response: { 200: Detailed, 503: Type.Union([Detailed, ProblemSchema]) } },
      statusOf: (body) => (body.status === 'ok' ? 200 : 503),
      handler: () => detailedHealth(ctx, VERSION),
    }),
  ];
}
