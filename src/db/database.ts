import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
import { type MigrationResultSet, Migrator } from 'kysely/migration';
import type pg from 'pg';
import { type DialectName, dialectOf } from './dialect.ts';
import { migrations } from './migrations/index.ts';
import { pgDriver } from './pg-driver.ts';
import type { DB } from './schema.ts';

/** An open database: the Kysely instance plus what health checks and shutdown need. */
export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: DialectName;
  /** The pg pool (PostgreSQL only), for LISTEN/NOTIFY and pool metrics. */
  readonly pool: pg.Pool | null;
  /** Round-trips `select 1`; resolves to the latency in milliseconds. */
  ping(): Promise<number>;
  close(): Promise<void>;
  /**
   * SQLite files only: closes the file handle as a failing volume would. The next query reopens
   * the file, which must exist by then. A seam for the fault tests; production never calls it.
   */
  dropConnection?: () => void;
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
  const connection = sqliteConnection(path, memory);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: connection.database }) });
  readers.set(db, connection.reader);
  return {
    db,
    dialect: 'sqlite',
    pool: null,
    ping: () => timed(() => sql`select 1`.execute(db)),
    close: () => db.destroy(),
    ...(memory ? {} : { dropConnection: connection.drop }),
  };
}

function configureSqlite(handle: SQLite.Database): SQLite.Database {
  handle.pragma('journal_mode = WAL');
  // FULL: a commit is on disk before the API acknowledges it, so even a power loss keeps every
  // acknowledged write (NORMAL survives a process crash but may drop the last commits on power loss).
  handle.pragma('synchronous = FULL');
  handle.pragma('foreign_keys = ON');
  handle.pragma('busy_timeout = 5000');
  // Reads straight from the OS page cache (no read() per page) and a 64 MiB page cache: random
  // row lookups, as index walks make them, stay cheap at a million users (docs/users.md).
  handle.pragma('mmap_size = 1073741824');
  handle.pragma('cache_size = -65536');
  // Unicode case folding for queries (SQLite's lower() folds ASCII only); user search uses it.
  handle.function('gh_fold', { deterministic: true }, (s: unknown) =>
    typeof s === 'string' ? s.toLowerCase() : s,
  );
  return handle;
}

// Errors that mean the file under the handle failed (gone, unreadable, replaced), not the query.
const FILE_FAILURE = /^SQLITE_(IOERR|CANTOPEN|NOTADB)/;

/**
 * A better-sqlite3 handle that recovers without a restart: after the file system failed under it
 * (an I/O error, the file replaced), it is closed at the next query outside a transaction and the
 * file reopened. Reopening never creates a file: a database that is missing answers 503 until it is
 * back, instead of a fresh, empty database being served. (An in-memory database is never reopened.)
 *
 * Prepared statements are reused by SQL text: Kysely's SQLite driver prepares every query anew,
 * and preparing was a tenth of a verify-token request (docs/benchmarks.md). The cache belongs to
 * the handle and is dropped with it. A statement still iterating (a streamed query) is busy and
 * cannot run twice, so a fresh one is made then.
 */
function sqliteConnection(
  path: string,
  memory: boolean,
): { database: SqliteDatabase; reader: SqliteReader; drop: () => void } {
  let handle: SQLite.Database | null = configureSqlite(new SQLite(memory ? ':memory:' : path));
  let broken = false;
  let closed = false;
  const cache = new Map<string, SQLite.Statement>();
  // The write mark (SqliteReader.writeMark): bumped on every new handle and on every commit another
  // connection makes; `dataVersion` is that connection's last PRAGMA data_version reading.
  let epoch = 0;
  let dataVersion: number | null = null;
  let dataVersionAt = Number.NEGATIVE_INFINITY;

  const release = () => {
    if (handle?.open) handle.close();
    handle = null;
    cache.clear();
  };
  const current = (): SQLite.Database => {
    if (closed) throw new Error('the database is closed');
    if (!memory && handle && (broken || !handle.open) && !handle.inTransaction) release();
    if (!handle) {
      handle = configureSqlite(new SQLite(path, { fileMustExist: true }));
      broken = false;
      epoch++;
      dataVersion = null;
    }
    return handle;
  };
  const watched = <T>(run: () => T): T => {
    try {
      return run();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && FILE_FAILURE.test(code)) broken = true;
      throw err;
    }
  };
  const prepare = (text: string): SQLite.Statement =>
    watched(() => {
      const h = current();
      const cached = cache.get(text);
      if (cached !== undefined && !cached.busy) return cached;
      const statement = h.prepare(text);
      if (cached === undefined) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(text, statement);
      }
      return statement;
    });

  const database: SqliteDatabase = {
    prepare(text) {
      const statement = prepare(text);
      return {
        reader: statement.reader,
        all: (parameters) => watched(() => statement.all(parameters)),
        run: (parameters) => watched(() => statement.run(parameters)),
        iterate: (parameters) => watched(() => statement.iterate(parameters)),
      };
    },
    close() {
      closed = true;
      release();
    },
  };
  const reader: SqliteReader = {
    get inTransaction() {
      return handle?.inTransaction ?? false;
    },
    get epoch() {
      return epoch;
    },
    prepare,
    writeMark() {
      const changes = prepare(TOTAL_CHANGES).get() as { n: number };
      const now = Date.now();
      if (now - dataVersionAt >= OTHER_WRITERS_CHECK_MS) {
        dataVersionAt = now;
        const version = prepare(DATA_VERSION).get() as { data_version: number };
        if (dataVersion !== null && version.data_version !== dataVersion) epoch++;
        dataVersion = version.data_version;
      }
      return changes.n;
    },
  };
  return { database, reader, drop: release };
}

/** Synchronous reads on the connection behind a Kysely instance (SQLite only). */
export interface SqliteReader {
  /** True while a Kysely transaction holds the connection: read through Kysely then, and wait. */
  readonly inTransaction: boolean;
  prepare(text: string): SQLite.Statement;
  /**
   * Rows this connection has changed since it opened (SQLite's total_changes(): every INSERT,
   * UPDATE and DELETE, trigger programs included). With `epoch`, it tells a cache of rows whether
   * anything may have been written since it read them: the number only grows while `epoch` stays.
   */
  writeMark(): number;
  /**
   * Changes when the handle is reopened (the count restarts) and when another connection's commit
   * is seen — PRAGMA data_version, read at most every OTHER_WRITERS_CHECK_MS, because it costs ten
   * times total_changes(). Only the CLI writes from outside (docs/deployment.md: one instance per
   * SQLite file), and none of its commands revokes a session or disables a user.
   */
  readonly epoch: number;
}

const TOTAL_CHANGES = 'select total_changes() as n';
const DATA_VERSION = 'pragma data_version';
const OTHER_WRITERS_CHECK_MS = 250;

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

function openPostgres(url: string, options: DatabaseOptions): Database {
  const statementTimeoutMs = options.statementTimeoutMs ?? 0;
  const pool = new (pgDriver().Pool)({
    connectionString: url,
    max: options.poolMax ?? 10,
    // Fail fast when the server is away, so requests get 503 instead of hanging.
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    // Lets the kernel notice a peer that vanished without closing the connection.
    keepAlive: true,
    // Sent in the startup packet: the server cancels any statement running longer (SQLSTATE 57014).
    ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
  });
  // A backend that dies while idle emits 'error' on the pool; unhandled, it would crash the process.
  pool.on('error', (err) => options.onPoolError?.(err));
  // pg-pool listens for client errors only while a client is idle: one that dies while checked out
  // (mid-query, between a transaction's statements) would emit an unhandled 'error' and kill the
  // process. The failing query rejects on its own and the pool drops the dead client on release.
  pool.on('connect', (client) => {
    client.on('error', ignoreCheckedOutClientError);
    superviseQueries(client, statementTimeoutMs > 0 ? statementTimeoutMs + READ_DEADLINE_MARGIN_MS : 0);
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    pool,
    ping: () => timed(() => sql`select 1`.execute(db)),
    close: () => db.destroy(),
  };
}

function ignoreCheckedOutClientError(): void {}

// The server cancels a statement at statement_timeout; no answer well after that means the network
// path is dead (a silent drop, no reset), and waiting for TCP to notice would take minutes.
const READ_DEADLINE_MARGIN_MS = 2000;

/**
 * Watches every promise query on a pooled client:
 * - a FATAL error (the backend was terminated: 57P01 on pg_terminate_backend or a server shutdown)
 *   ends the client at once, so the pool discards it on release instead of handing the dead
 *   connection to the next request before its socket has closed;
 * - with a deadline, a query still unanswered after `deadlineMs` destroys the socket: the query
 *   rejects with a connection error (answered 503) and the pool discards the client. pg's own
 *   `query_timeout` would leave the stuck query on the connection and return it to the pool.
 */
function superviseQueries(client: pg.PoolClient, deadlineMs: number): void {
  const query = client.query;
  const supervised = (...args: unknown[]): unknown => {
    const result: unknown = Reflect.apply(query, client, args);
    if (!(result instanceof Promise)) return result;
    let timer: NodeJS.Timeout | undefined;
    if (deadlineMs > 0) {
      timer = setTimeout(() => {
        client.connection.stream.destroy(
          new Error(`Connection terminated: no answer from the database within ${deadlineMs} ms`),
        );
      }, deadlineMs);
      timer.unref();
    }
    result.then(
      () => clearTimeout(timer),
      (err: unknown) => {
        clearTimeout(timer);
        const severity = (err as { severity?: unknown } | null)?.severity;
        if (severity === 'FATAL' || severity === 'PANIC') client.end().catch(() => {});
      },
    );
    return result;
  };
  client.query = supervised as typeof client.query;
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
  const newer = await newerMigrations(db);
  if (newer.length > 0) {
    throw new Error(
      `the database was migrated by a newer version of Gatehouse (${newer.join(', ')} unknown here); run that version's migrate`,
    );
  }
  const { error, results } =
    dialectOf(db) === 'sqlite' ? await migrateSqliteLocked(db) : await migrator(db).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    const reason = error instanceof Error ? error.message : String(error);
    // No failing migration named: the migrator failed before running any (lock, connection).
    throw new Error(
      failed ? `migration ${failed} failed: ${reason}` : `migrating the database failed: ${reason}`,
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * The serve-time migration step. Nothing pending: the migrator is not even entered, so starting
 * instances take no migration lock (Kysely's is a session-level advisory lock, which a transaction
 * pooler such as PgBouncer cannot keep on one server connection). A database a newer version has
 * already migrated (a rolling deploy after `gatehouse migrate`, an old instance restarting
 * mid-rollout, a rolled-back binary) is served as it is, not refused: migrations are
 * expand/contract, so this version still works on the expanded schema. `newer` names the
 * migrations this version does not know.
 */
export async function migrateAtStart(db: Kysely<DB>): Promise<{ applied: string[]; newer: string[] }> {
  const done = await appliedMigrations(db);
  const newer = done.filter((name) => !(name in migrations)).sort();
  if (newer.length > 0) return { applied: [], newer };
  const pending = Object.keys(migrations).some((name) => !done.includes(name));
  if (!pending) return { applied: [], newer };
  return { applied: await migrateToLatest(db), newer };
}

/** Applied migrations this version does not know; empty on a fresh database. */
async function newerMigrations(db: Kysely<DB>): Promise<string[]> {
  return (await appliedMigrations(db)).filter((name) => !(name in migrations)).sort();
}

/** Names of the applied migrations; empty on a fresh database. */
async function appliedMigrations(db: Kysely<DB>): Promise<string[]> {
  try {
    const result = await sql<{ name: string }>`select name from gatehouse_migrations`.execute(db);
    return result.rows.map((r) => r.name);
  } catch {
    // No migration table yet (a fresh database); any other failure resurfaces in the migrator.
    return [];
  }
}

/**
 * Kysely takes no lock on SQLite (it assumes one connection), so two processes starting on the same
 * empty file both ran the first migration and one failed with "table already exists". Here the
 * whole run is one `BEGIN IMMEDIATE` transaction: the second process waits (busy_timeout), then
 * finds the migrations applied. SQLite DDL is transactional, so a failing migration leaves nothing
 * behind. Migrations therefore must not open transactions of their own.
 */
async function migrateSqliteLocked(db: Kysely<DB>): Promise<MigrationResultSet> {
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    let outcome: MigrationResultSet;
    try {
      outcome = await migrator(conn).migrateToLatest();
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
    await sql.raw(outcome.error ? 'rollback' : 'commit').execute(conn);
    return outcome;
  });
}

/** Counts applied and pending migrations (health endpoints). */
export async function migrationStatus(db: Kysely<DB>): Promise<{ applied: number; pending: number }> {
  const list = await migrator(db).getMigrations();
  const applied = list.filter((m) => m.executedAt !== undefined).length;
  return { applied, pending: list.length - applied };
}

const UNAVAILABLE_PG_CLASSES = ['08', '53', '57', '58'];
// Transient single conditions: serialization failure and deadlock (retry), lock_timeout, and a
// read-only server (a failover in progress: the address still leads to the demoted primary).
const UNAVAILABLE_PG_CODES = ['40001', '40P01', '55P03', '25006'];
const UNAVAILABLE_SQLITE = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_FULL'];
const UNAVAILABLE_NET = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'];

/** True when an error means the database cannot serve right now (answer 503, not 500). */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_NET.includes(code)) return true;
    if (UNAVAILABLE_SQLITE.some((c) => code.startsWith(c))) return true;
    if (UNAVAILABLE_PG_CODES.includes(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && UNAVAILABLE_PG_CLASSES.includes(code.slice(0, 2))) return true;
  }
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|database is locked|unable to open database|the database is closed|driver has already been destroyed/i.test(
    err.message,
  );
}

export { dialectOf };
