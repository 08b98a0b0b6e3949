import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { renderMetrics } from './metrics.ts';

const CHALLENGE = 'Bearer realm="gatehouse-metrics"';

/** `GET /metrics`: Prometheus text, served by the core module but not listed in the index. */
export function metricsEndpoints(ctx: AppContext): Endpoint[] {
  const expected = ctx.config.metricsToken === null ? null : digest(ctx.config.metricsToken);
  return [
    endpoint({
      group: 'core',
      label: 'metrics',
      method: 'GET',
      path: '/metrics',
      access: 'public',
      hidden: true,
      summary: 'Prometheus metrics (Bearer METRICS_TOKEN; anonymous only with METRICS_PUBLIC=true)',
      // Not JSON: the handler sets the exposition format's content type and sends the text itself.
      ownsReply: true,
      schema: { response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4' }) } },
      handler: async (req, reply) => {
        // Anonymous metrics only when the operator opens them on purpose (docs/api.md §10):
        // they tell an outsider the traffic, the failure rates and the module set.
        if (expected === null && !ctx.config.metricsPublic) {
          throw new ApiError('not_found', {
            detail: 'Metrics are off: set METRICS_TOKEN (or METRICS_PUBLIC=true) to serve them',
          });
        }
        if (expected !== null) {
          const header = req.headers.authorization;
          const match = typeof header === 'string' ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
          if (!match?.[1]) {
            throw new ApiError('unauthenticated', {
              detail: 'The metrics need the METRICS_TOKEN as a Bearer token',
              headers: { 'www-authenticate': CHALLENGE },
            });
          }
          // Compared as digests: constant time, whatever the lengths.
          if (!timingSafeEqual(digest(match[1]), expected)) {
            throw new ApiError('token_invalid', {
              detail: 'The metrics token is not valid',
              headers: { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` },
            });
          }
        }
        const { contentType, body } = await renderMetrics(ctx);
        return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
      },
    }),
  ];
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
