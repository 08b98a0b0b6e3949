import { getHeapStatistics } from 'node:v8';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../platform/config.ts';
import { ApiError } from './errors.ts';

/** Liveness keeps answering under pressure: a busy process is alive, and restarting it would only add load. */
const EXEMPT = new Set(['/health']);

// Pressure is sampled once a second and eases within seconds once load drops.
const RETRY_AFTER_S = 5;
// Shed requests are not logged one by one (errors.ts); one warning per this interval instead.
const WARN_EVERY_MS = 10_000;

const REASONS: Record<string, string> = {
  eventLoopDelay: 'the event loop is overloaded',
  heapUsedBytes: 'memory (heap) is nearly exhausted',
  rssBytes: 'memory (resident set) is over its limit',
  load: 'the process is overloaded',
};

/** The heap limit under-pressure watches when PRESSURE_MAX_HEAP_USED_MB is not set: 90% of V8's. */
export function defaultMaxHeapUsedBytes(): number {
  return Math.floor(getHeapStatistics().heap_size_limit * 0.9);
}

/**
 * @fastify/under-pressure samples the event-loop delay and memory; while one is over its limit,
 * every request except liveness gets 503 `unavailable` (problem+json, Retry-After, through the
 * error handler) from its onRequest hook. Register after the hook that sets the request id and
 * security headers, so a shed request carries them too.
 */
export async function registerLoadShedding(app: FastifyInstance, config: Config): Promise<void> {
  const { maxEventLoopDelayMs, maxHeapUsedMb, maxRssMb } = config.pressure;
  const mb = 1024 * 1024;
  let lastWarning = 0;
  let shed = 0;
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    maxHeapUsedBytes: maxHeapUsedMb === null ? defaultMaxHeapUsedBytes() : maxHeapUsedMb * mb,
    maxRssBytes: maxRssMb * mb,
    pressureHandler: (request, _reply, type, value) => {
      if (EXEMPT.has(request.routeOptions.url ?? '')) return undefined;
      shed++;
      const now = Date.now();
      if (now - lastWarning >= WARN_EVERY_MS) {
        app.log.warn({ type, value, shed }, 'under pressure: shedding requests with 503');
        lastWarning = now;
        shed = 0;
      }
      // A rejected promise: under-pressure hands its error to the hook's next(), the error handler.
      return Promise.reject(
        new ApiError('unavailable', {
          detail: `The service is under pressure (${REASONS[type] ?? type}); retry shortly`,
          retryAfterS: RETRY_AFTER_S,
        }),
      );
    },
  });
}
