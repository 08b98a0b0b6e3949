import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, type SqliteDatabase } from 'kysely';
import type pg from 'pg';
import { type AuthWrites, createAuthWrites, watchPgClient } from './auth-writes.ts';
import { configureSqlite, prepareDataVersion, selectOne } from './database.queries.ts';
import { type DialectName, dialectOf } from './dialect.ts';
import { pgDriver } from './pg-driver.ts';
import type { DB } from './schema.ts';
import { ImmediateSqliteDialect } from './sqlite-dialect.ts';
import { statementCache } from './statement-cache.ts';

/** An open database: the Kysely instance plus what health checks and shutdown need. */
export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: DialectName;
  /** The pg pool (PostgreSQL only), for LISTEN/NOTIFY and pool metrics. */
  readonly pool: pg.Pool | null;
  /** This process's writes to users and sessions, seen at the driver (for the session cache). */
  readonly authWrites: AuthWrites;
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
  if (!memory) ensureSqliteDirectory(path);
  const connection = sqliteConnection(path, memory);
  const db = new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: connection.database }) });
  return {
    db,
    dialect: 'sqlite',
    pool: null,
    authWrites: connection.authWrites,
    ping: () => timed(() => selectOne(db)),
    close: () => db.destroy(),
    ...(memory ? {} : { dropConnection: connection.drop }),
  };
}

/**
 * Creates the missing directories above an SQLite file one level at a time. Node's recursive
 * mkdir spins at full CPU forever under /proc, and names a file in the way only as EEXIST: both
 * now stop the start at once with one line naming the directory.
 */
export function ensureSqliteDirectory(file: string): void {
  const fail = (why: string) =>
    new Error(`cannot use the SQLite file ${resolve(file)}: ${why} (DATABASE_URL)`);
  const missing: string[] = [];
  let dir = dirname(resolve(file));
  for (;;) {
    try {
      if (!statSync(dir).isDirectory()) throw fail(`${dir} is not a directory`);
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === undefined) throw err;
      // ENOTDIR: a file further up is in the way; the walk up names it.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw fail(`${dir}: ${code}`);
    }
    missing.unshift(dir);
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw fail(`cannot create the directory ${level} (${code ?? String(err)})`);
    }
  }
}

// Errors that mean the file under the handle failed (gone, unreadable, replaced), not the query.
const FILE_FAILURE = /^SQLITE_(IOERR|CANTOPEN|NOTADB)/;

/**
 * A better-sqlite3 handle that recovers without a restart: after the file system failed under it
 * (an I/O error, the file replaced), it is closed at the next query outside a transaction and the
 * file reopened. Reopening never creates a file: a database that is missing answers 503 until it is
 * back, instead of a fresh, empty database being served. (An in-memory database is never reopened.)
 */
function sqliteConnection(
  path: string,
  memory: boolean,
): { database: SqliteDatabase; drop: () => void; authWrites: AuthWrites } {
  let handle: SQLite.Database | null;
  try {
    handle = configureSqlite(new SQLite(memory ? ':memory:' : path));
  } catch (err) {
    // SQLite's own words ("unable to open database file") do not say which file.
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`cannot open the SQLite file ${resolve(path)}: ${reason} (DATABASE_URL)`);
  }
  let broken = false;
  let closed = false;
  const auth = createAuthWrites();
  const watch = auth.connection();
  let dataVersion: SQLite.Statement | null = null;
  const statements = statementCache();

  const release = () => {
    watch.ended();
    if (handle?.open) handle.close();
    handle = null;
    dataVersion = null;
    statements.clear();
  };
  const current = (): SQLite.Database => {
    if (closed) throw new Error('the database is closed');
    if (!memory && handle && (broken || !handle.open) && !handle.inTransaction) release();
    if (!handle) {
      handle = configureSqlite(new SQLite(path, { fileMustExist: true }));
      broken = false;
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
  const prepare = (text: string): SQLite.Statement => watched(() => statements.prepare(current(), text));

  // Every statement is reported to the auth-write watch as it runs (begin/commit included).
  const reported = <T>(text: string, run: () => T): T => {
    const after = watch.statement(text);
    try {
      return watched(run);
    } finally {
      after?.();
    }
  };
  const database: SqliteDatabase = {
    prepare(text) {
      const statement = prepare(text);
      return {
        reader: statement.reader,
        all: (parameters) => reported(text, () => statement.all(parameters)),
        run: (parameters) => reported(text, () => statement.run(parameters)),
        iterate: (parameters) => watched(() => statement.iterate(parameters)),
      };
    },
    close() {
      closed = true;
      release();
    },
  };
  // data_version changes when another connection commits, and restarts with a reopened handle:
  // either way cached rows go.
  const authWrites: AuthWrites = Object.assign(auth.writes, {
    otherWriters: () =>
      watched(() => {
        const h = current();
        dataVersion ??= prepareDataVersion(h);
        return dataVersion.get() as number;
      }),
  });
  return { database, drop: release, authWrites };
}

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
  const authWrites = createAuthWrites();
  pool.on('connect', (client) => {
    client.on('error', ignoreCheckedOutClientError);
    watchPgClient(client, authWrites.connection());
    superviseQueries(client, statementTimeoutMs > 0 ? statementTimeoutMs + READ_DEADLINE_MARGIN_MS : 0);
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    pool,
    authWrites: authWrites.writes,
    ping: () => timed(() => selectOne(db)),
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

export { migrateAtStart, migrateToLatest, migrationStatus } from './migrate.ts';
export { dialectOf };
