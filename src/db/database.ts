import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { type DialectName, dialectOf } from './dialect.ts';
import { migrations } from './migrations/index.ts';
import type { DB } from './schema.ts';

// int8 (bigint, count(*)) as numbers: every value Gatehouse stores fits in 2^53 (epoch ms, counts).
pg.types.setTypeParser(20, (v) => Number(v));

/** An open database: the Kysely instance plus what health checks and shutdown need. */
export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: DialectName;
  /** The pg pool (PostgreSQL only), for LISTEN/NOTIFY and pool metrics. */
  readonly pool: pg.Pool | null;
  /** Round-trips `select 1`; resolves to the latency in milliseconds. */
  ping(): Promise<number>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  poolMax?: number;
  statementTimeoutMs?: number;
  onPoolError?: (err: Error) => void;
}

/** Opens SQLite (`sqlite:<path>`, `sqlite::memory:`) or PostgreSQL (`postgres://…`) behind Kysely. */
export function openDatabase(url: string, options: DatabaseOptions = {}): Database {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  return openPostgres(url, options);
}

function openSqlite(path: string): Database {
  const memory = path === ':memory:';
  if (!memory) mkdirSync(dirname(resolve(path)), { recursive: true });
  const sqlite = new SQLite(memory ? ':memory:' : path);
  sqlite.pragma('journal_mode = WAL');
  // FULL: a commit is on disk before the API acknowledges it, so even a power loss keeps every
  // acknowledged write (NORMAL survives a process crash but may drop the last commits on power loss).
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Reads straight from the OS page cache (no read() per page) and a 64 MiB page cache: random
  // row lookups, as index walks make them, stay cheap at a million users (docs/users.md).
  sqlite.pragma('mmap_size = 1073741824');
  sqlite.pragma('cache_size = -65536');
  // Unicode case folding for queries (SQLite's lower() folds ASCII only); user search uses it.
  sqlite.function('gh_fold', { deterministic: true }, (s: unknown) =>
    typeof s === 'string' ? s.toLowerCase() : s,
  );
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    dialect: 'sqlite',
    pool: null,
    ping: () => timed(() => sql`select 1`.execute(db)),
    close: () => db.destroy(),
  };
}

function openPostgres(url: string, options: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax ?? 10,
    // Fail fast when the server is away, so requests get 503 instead of hanging.
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  // A backend that dies while idle emits 'error' on the pool; unhandled, it would crash the process.
  pool.on('error', (err) => options.onPoolError?.(err));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    pool,
    ping: () => timed(() => sql`select 1`.execute(db)),
    close: () => db.destroy(),
  };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function migrator(db: Kysely<DB>): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
  });
}

/** Applies pending migrations; throws with the failing migration's name. Returns the names applied now. */
export async function migrateToLatest(db: Kysely<DB>): Promise<string[]> {
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Counts applied and pending migrations (health endpoints). */
export async function migrationStatus(db: Kysely<DB>): Promise<{ applied: number; pending: number }> {
  const list = await migrator(db).getMigrations();
  const applied = list.filter((m) => m.executedAt !== undefined).length;
  return { applied, pending: list.length - applied };
}

const UNAVAILABLE_PG_CLASSES = ['08', '53', '57', '58'];
const UNAVAILABLE_SQLITE = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_FULL'];
const UNAVAILABLE_NET = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'];

/** True when an error means the database cannot serve right now (answer 503, not 500). */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_NET.includes(code)) return true;
    if (UNAVAILABLE_SQLITE.some((c) => code.startsWith(c))) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && UNAVAILABLE_PG_CLASSES.includes(code.slice(0, 2))) return true;
  }
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|database is locked|unable to open database|driver has already been destroyed/i.test(
    err.message,
  );
}

export { dialectOf };
