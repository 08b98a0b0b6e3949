import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { AppContext } from '../../src/kernel/context.types.ts';
import { startService } from '../../src/kernel/server.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createTestDatabase, type TestDatabase, type TestDialect } from './databases.ts';

export const ADMIN_EMAIL = 'root@gatehouse.test';
export const ADMIN_PASSWORD = 'correct horse battery staple 42';
export const PUBLIC_URL = 'http://gatehouse.test';
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

/** A Gatehouse app on its own fresh database, driven through app.inject(). */
export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  dialect: TestDialect;
  databaseUrl: string;
  /** Closes the app; the database stays (for restart tests) until `destroy`. */
  close(): Promise<void>;
  /** Builds a second app on the same database (a restart, or another instance). */
  restart(env?: Record<string, string>): Promise<TestApp>;
  /** Closes the app and drops the database. */
  destroy(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Reuse an existing database instead of creating one. */
  database?: TestDatabase;
  /** Collect every log line (JSON) here, at the configured LOG_LEVEL (set it in env). */
  logLines?: string[];
}

/** Environment every test app starts from; tests override per case. */
export function testEnv(databaseUrl: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    PUBLIC_URL,
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Load shedding on event-loop delay depends on timing, and the suite's own load (two files at
    // once on two cores, argon2, child processes) can trip it; test/app/load-shedding.test.ts turns it on.
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
    // A fixed key for second-factor secrets: without one, `full` cannot start on PostgreSQL (docs/mfa.md).
    SECRETS_KEY: TEST_SECRETS_KEY,
    ...env,
  };
}

/** Builds an app on a fresh database of the dialect (migrated, first admin created). */
export async function buildTestApp(dialect: TestDialect, options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase(dialect));
  const env = options.env ?? {};
  const config = loadConfig(testEnv(database.url, env));
  const lines = options.logLines;
  const destination = lines ? { write: (line: string) => void lines.push(line) } : undefined;
  const service = await startService(config, createLogger(config.logLevel, destination));
  await service.app.ready();
  const testApp: TestApp = {
    app: service.app,
    ctx: service.ctx,
    dialect,
    databaseUrl: database.url,
    close: () => service.close(),
    restart: (nextEnv) =>
      buildTestApp(dialect, { database, env: { ...env, ...nextEnv }, ...(lines ? { logLines: lines } : {}) }),
    async destroy() {
      await service.close();
      await database.drop();
    },
  };
  return testApp;
}

/** Parses a JSON response body. */
export function json<T = Record<string, unknown>>(res: LightMyRequestResponse): T {
  return JSON.parse(res.body) as T;
}
