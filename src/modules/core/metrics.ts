import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { countLiveSessions, countLogin, type LoginOutcome } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { AppMetrics } from '../../platform/app-metrics.ts';
import type { Database } from '../../platform/db/database.ts';
import type { DB } from '../../platform/db/schema.ts';
import { countPendingMessages } from '../../platform/mail/outbox.queries.ts';

const LOGIN_OUTCOMES: readonly LoginOutcome[] = ['success', 'failure', 'rate_limited'];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
// Counting rows is a scan on big tables: a scrape every second must not turn into a query every second.
const COUNT_CACHE_MS = 5000;

// Process-wide metrics (event-loop delay, memory, GC, CPU) exist once per process, not per app.
let processRegistry: Registry | null = null;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

// The sign-in pipeline counts every attempt itself (src/identity/sign-in/attempt.ts); this module
// owns the counter's declaration below.
export { countLogin };

/** Times every response by route pattern (never the raw URL: ids would explode the series). */
export function installRequestMetrics(app: FastifyInstance, ctx: AppContext): void {
  const { requests } = ctx.metrics;
  app.addHook('onResponse', (request, reply, done) => {
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    const route = request.routeOptions.url ?? 'unmatched';
    requests.observe({ method, route, status_code: reply.statusCode }, reply.elapsedTime / 1000);
    done();
  });
}

/** The Prometheus text exposition: this app's metrics, then the process's. */
export async function renderMetrics(ctx: AppContext): Promise<{ contentType: string; body: string }> {
  const { registry } = ctx.metrics;
  const [app, proc] = await Promise.all([registry.metrics(), processMetrics().metrics()]);
  return { contentType: registry.contentType, body: `${app}\n${proc}` };
}

/** What the app's metrics read at scrape time. */
export interface MetricsInputs {
  readonly db: Kysely<DB>;
  readonly database: Database;
  readonly log: Logger;
}

/** The app's metrics (`ctx.metrics`), made once per context by createContext. */
export function createAppMetrics({ db, database, log }: MetricsInputs): AppMetrics {
  const registry = new Registry();
  const requests = new Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'HTTP request duration by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const logins = new Counter({
    name: 'gatehouse_logins_total',
    help: 'Login attempts by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of LOGIN_OUTCOMES) logins.inc({ outcome }, 0);

  const cachedCount = (query: () => Promise<number>) => {
    let value = 0;
    let at = Number.NEGATIVE_INFINITY;
    return async () => {
      if (Date.now() - at >= COUNT_CACHE_MS) {
        value = await query();
        at = Date.now();
      }
      return value;
    };
  };
  const liveSessions = cachedCount(() => countLiveSessions(db, Date.now()));
  const pendingMail = cachedCount(() => countPendingMessages(db));
  // A failing query keeps the last value (gatehouse_database_up tells why); the scrape still answers.
  const countGauge = (name: string, help: string, count: () => Promise<number>) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        try {
          this.set(await count());
        } catch (err) {
          log.debug({ err }, `metrics: ${name} unavailable`);
        }
      },
    });
  countGauge('gatehouse_active_sessions', 'Sessions neither revoked nor expired', liveSessions);
  countGauge('gatehouse_outbox_pending', 'Mail messages waiting in the outbox', pendingMail);
  // Both gauges come from one ping per scrape: prom-client starts each collect() in registration
  // order, so the ping gauge's collect sets `ping` before the up gauge's collect awaits it.
  let ping: Promise<number | null> = Promise.resolve(null);
  new Gauge({
    name: 'gatehouse_database_ping_seconds',
    help: 'Round trip of a trivial query at scrape time',
    registers: [registry],
    async collect() {
      ping = database.ping().catch(() => null);
      const ms = await ping;
      if (ms !== null) this.set(ms / 1000);
    },
  });
  new Gauge({
    name: 'gatehouse_database_up',
    help: '1 when the database answered the scrape-time ping',
    registers: [registry],
    async collect() {
      this.set((await ping) === null ? 0 : 1);
    },
  });
  const pool = database.pool;
  if (pool) {
    new Gauge({
      name: 'gatehouse_database_pool_connections',
      help: 'PostgreSQL pool connections: total, idle, and callers waiting for one',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        this.set({ state: 'total' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
  }

  return { registry, logins, requests };
}
