import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../platform/api-error.ts';
import type { Config } from '../platform/config.ts';

/** Liveness keeps answering under pressure: a busy process is alive, and restarting it would only add load. */
const EXEMPT = new Set(['/health']);

// Pressure is sampled once a second and eases within seconds once load drops.
const SAMPLE_EVERY_MS = 1000;
const RETRY_AFTER_S = 5;
// Shed requests are not logged one by one (errors.ts); one warning per this interval instead.
const WARN_EVERY_MS = 10_000;
// The event-loop delay histogram's resolution; its mean minus this is the lag (as under-pressure reads it).
const RESOLUTION_MS = 10;

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
 * Every request except liveness gets 503 `unavailable` (problem+json, Retry-After, through the error
 * handler) from an onRequest hook while one of these is over its limit:
 * - memory (heap, RSS), sampled by @fastify/under-pressure;
 * - the event-loop delay, sampled here and only from the moment the app is ready (Fastify's ready,
 *   which listen awaits): loading the modules and compiling every route's schemas block the loop
 *   for seconds on a busy host, and counted as lag they shed the first requests of a service that
 *   has just said it is up (docs/operations.md, "Readiness").
 * Register after the hook that sets the request id and security headers, so a shed request carries
 * them too.
 */
export async function registerLoadShedding(app: FastifyInstance, config: Config): Promise<void> {
  const { maxEventLoopDelayMs, maxHeapUsedMb, maxRssMb } = config.pressure;
  const mb = 1024 * 1024;
  let lastWarning = 0;
  let shed = 0;
  const shedding = (request: FastifyRequest, type: string, value: number | undefined) => {
    if (EXEMPT.has(request.routeOptions.url ?? '')) return undefined;
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
  await app.register(underPressure, {
    sampleInterval: SAMPLE_EVERY_MS,
    maxHeapUsedBytes: maxHeapUsedMb === null ? defaultMaxHeapUsedBytes() : maxHeapUsedMb * mb,
    maxRssBytes: maxRssMb * mb,
    pressureHandler: (request, _reply, type, value) => {
      const error = shedding(request, type, value);
      // A rejected promise: under-pressure hands its error to the hook's next(), the error handler.
      return error === undefined ? undefined : Promise.reject(error);
    },
  });
  if (maxEventLoopDelayMs > 0) {
    const lag = eventLoopLagFromReady(app);
    app.addHook('onRequest', (request, _reply, done) => {
      const value = lag();
      done(value > maxEventLoopDelayMs ? shedding(request, 'eventLoopDelay', value) : undefined);
    });
  }
}

/**
 * The event loop's mean delay over the last sampling interval, in ms, measured from the app's ready
 * on (0 before the first sample). A loop blocked through a whole interval records nothing: Infinity.
 */
function eventLoopLagFromReady(app: FastifyInstance): () => number {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  let lag = 0;
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', (done) => {
    histogram.enable();
    timer = setInterval(() => {
      const mean = histogram.mean / 1e6;
      lag = Number.isNaN(mean) ? Number.POSITIVE_INFINITY : Math.max(0, mean - RESOLUTION_MS);
      histogram.reset();
    }, SAMPLE_EVERY_MS);
    timer.unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(timer);
    histogram.disable();
    done();
  });
  return () => lag;
}
