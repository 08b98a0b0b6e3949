import type { AppContext } from '../../kernel/context.types.ts';
import { migrationStatus } from '../../platform/db/database.ts';
import type { HealthCheck } from '../../platform/health-check.ts';

const CHECK_TIMEOUT_MS = 2000;

/** The database check: latency of a round trip, `error` when it fails or takes over 2 s. */
export async function checkDatabase(ctx: AppContext): Promise<HealthCheck> {
  try {
    const latency = await withTimeout(ctx.database.ping());
    return { status: 'ok', latency_ms: Math.round(latency * 100) / 100 };
  } catch {
    // The reason goes nowhere near the response: driver messages can carry hosts and users.
    return { status: 'error' };
  }
}

/** `/health/detailed`: every check, the module switches, version and uptime. */
export async function detailedHealth(ctx: AppContext, version: string) {
  const names = ['database', ...ctx.healthChecks.keys()];
  const results = await Promise.all([
    checkDatabase(ctx),
    ...[...ctx.healthChecks.values()].map((check) =>
      withTimeout(check()).catch(() => ({ status: 'error' as const })),
    ),
  ]);
  const checks = Object.fromEntries(names.map((n, i) => [n, results[i] as HealthCheck]));
  const databaseOk = checks.database?.status === 'ok';
  const allOk = Object.values(checks).every((c) => c.status !== 'error');
  const status = !databaseOk ? 'down' : allOk ? 'ok' : 'degraded';
  // Each background job's last run and last failure (the reason goes to the log only). Jobs do not
  // decide the status: a failed prune is retried on the next beat, and the database check covers
  // the outage behind most failures.
  checks.jobs = { status: 'ok', ...ctx.jobs.report() };
  return {
    status,
    version,
    uptime_s: Math.round((Date.now() - ctx.startedAt) / 100) / 10,
    checks,
    modules: ctx.modules.snapshot(),
  } as const;
}

/** `/api/v1/core/health`: the database and the migrations. */
export async function coreHealth(ctx: AppContext) {
  const database = await checkDatabase(ctx);
  let migrations = { applied: 0, pending: 0 };
  let migrationsOk = false;
  if (database.status === 'ok') {
    try {
      migrations = await withTimeout(migrationStatus(ctx.db));
      migrationsOk = migrations.pending === 0;
    } catch {
      migrationsOk = false;
    }
  }
  const ok = database.status === 'ok' && migrationsOk;
  return {
    module: 'core',
    status: ok ? 'ok' : 'down',
    database: database.status === 'ok' ? 'ok' : 'down',
    migrations,
  } as const;
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('health check timed out')), CHECK_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
