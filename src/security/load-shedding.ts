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
  load: 'the process is overloaded',
};

/** The heap limit under-pressure watches when PRESSURE_MAX_HEAP_USED_MB is not set: 90% of V8's. */
export function defaultMaxHeapUsedBytes(): number {
  return Math.floor(getHeapStatistics().heap_size_limit * 0.9);
}

/** The refusal for a request while the process is under pressure, or undefined to let it through. */
export type LoadShedder = (request: FastifyRequest) => ApiError | undefined;

/**
 * Samples pressure with @fastify/under-pressure: while the mean event-loop delay or memory is over
 * its limit, every request except liveness gets 503 `unavailable` (problem+json, Retry-After) from
 * the returned check, which the app's onRequest hook calls before any work.
 *
 * The plugin is registered in a scope of its own, so its own per-request hook applies to no route:
 * that hook reads `request.routeOptions`, a getter that builds an object on every request, and one
 * hook fewer is cheaper still (about 2.5% of a /health request, docs/benchmarks.md). The plugin
 * keeps the sampling; the check asks its `isUnderPressure()` and its figures name the reason.
 */
export async function registerLoadShedding(app: FastifyInstance, config: Config): Promise<LoadShedder> {
  const { maxEventLoopDelayMs, maxHeapUsedMb, maxRssMb } = config.pressure;
  const mb = 1024 * 1024;
  const limits = {
    eventLoopDelay: maxEventLoopDelayMs,
    heapUsedBytes: maxHeapUsedMb === null ? defaultMaxHeapUsedBytes() : maxHeapUsedMb * mb,
    rssBytes: maxRssMb * mb,
  };
  let sampler: FastifyInstance | undefined;
  await app.register(async (scope) => {
    await scope.register(underPressure, {
      maxEventLoopDelay: limits.eventLoopDelay,
      maxHeapUsedBytes: limits.heapUsedBytes,
      maxRssBytes: limits.rssBytes,
    });
    sampler = scope;
  });
  if (!sampler) throw new Error('under-pressure did not register');
  const pressure = sampler;

  // The same order as under-pressure's own checks: the first limit exceeded names the reason.
  const reasonNow = (): { type: string; value?: number } => {
    const now = pressure.memoryUsage();
    if (limits.eventLoopDelay > 0 && now.eventLoopDelay > limits.eventLoopDelay)
      return { type: 'eventLoopDelay', value: now.eventLoopDelay };
    if (limits.heapUsedBytes > 0 && now.heapUsed > limits.heapUsedBytes)
      return { type: 'heapUsedBytes', value: now.heapUsed };
    if (limits.rssBytes > 0 && now.rssBytes > limits.rssBytes)
      return { type: 'rssBytes', value: now.rssBytes };
    return { type: 'load' };
  };

  let lastWarning = 0;
  let shed = 0;
  const refuse = (request: FastifyRequest): ApiError | undefined => {
    if (EXEMPT.has(request.routeOptions.url ?? '')) return undefined;
    const { type, value } = reasonNow();
    shed++;
    const now = Date.now();
    if (now - lastWarning >= WARN_EVERY_MS) {
      app.log.warn({ type, value, shed }, 'under pressure: shedding requests with 503');
      lastWarning = now;
      shed = 0;
    }
    return new ApiError('unavailable', {
      detail: `The service is under pressure (${REASONS[type] ?? type}); retry shortly`,
      retryAfterS: RETRY_AFTER_S,
    });
  };
  return (request) => (pressure.isUnderPressure() ? refuse(request) : undefined);
}
