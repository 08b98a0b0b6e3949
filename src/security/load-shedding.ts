import { getHeapStatistics } from 'node:v8';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';

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
  healthCheck: 'a dependency check failed',
  eventLoopUtilization: 'the event loop is saturated',
};

/** The heap limit under-pressure watches when PRESSURE_MAX_HEAP_USED_MB is not set: 90% of V8's. */
export function defaultMaxHeapUsedBytes(): number {
  return Math.floor(getHeapStatistics().heap_size_limit * 0.9);
}

/**
 * Registers @fastify/under-pressure: while the mean event-loop delay or memory is over its limit,
 * every request except liveness gets 503 `unavailable` (problem+json, Retry-After) before any work.
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
    // Async, so a throw reaches the error handler (problem+json) instead of under-pressure's own body.
    pressureHandler: async (request: FastifyRequest, _reply: unknown, type: string, value: unknown) => {
      if (EXEMPT.has(request.routeOptions.url ?? '')) return;
      shed++;
      const now = Date.now();
      if (now - lastWarning >= WARN_EVERY_MS) {
        app.log.warn({ type, value, shed }, 'under pressure: shedding requests with 503');
        lastWarning = now;
        shed = 0;
      }
      throw new ApiError('unavailable', {
        detail: `The service is under pressure (${REASONS[type] ?? type}); retry shortly`,
        retryAfterS: RETRY_AFTER_S,
      });
    },
  });
}
