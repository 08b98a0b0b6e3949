import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
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
  const cached = withStatementCache(sqlite);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: cached }) });
  readers.set(db, {
    get inTransaction() {
      return sqlite.inTransaction;
    },
    prepare: (text) => cached.prepare(text) as SQLite.Statement,
  });
  return {
    db,
    dialect: 'sqlite',
    pool: null,
    ping: () => timed(() => sql`select 1`.execute(db)),
    close: () => db.destroy(),
  };
}

/** Synchronous reads on the connection behind a Kysely instance (SQLite only). */
export interface SqliteReader {
  /** True while a Kysely transaction holds the connection: read through Kysely then, and wait. */
  readonly inTransaction: boolean;
  prepare(text: string): SQLite.Statement;
}

const readers = new WeakMap<Kysely<DB>, SqliteReader>();

/**
 * The synchronous reader behind a SQLite Kysely instance, for the hottest reads (the guard's):
 * Kysely's promise and connection-lock round trip per query was a tenth of a verify-token request.
 * Only safe outside transactions — Kysely runs a query whole without yielding, so when no
 * transaction is open, nothing else is using the connection. Undefined for PostgreSQL and for
 * transaction objects.
 */
export function sqliteReader(db: Kysely<DB>): SqliteReader | undefined {
  return readers.get(db);
}

/** Most statements Gatehouse issues are a few dozen fixed texts; this many covers them all. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every query anew; preparing was a tenth of a verify-token
 * request (docs/benchmarks.md). Prepared statements are reused by SQL text instead. A statement
 * still iterating (a streamed query) is busy and cannot run twice, so a fresh one is made then.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      const cached = cache.get(text);
      if (cached !== undefined && !cached.busy) return cached;
      const statement = sqlite.prepare(text);
      if (cached === undefined) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(text, statement);
      }
      return statement;
    },
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
