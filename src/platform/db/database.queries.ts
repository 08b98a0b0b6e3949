import type SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import type { DB } from './schema.ts';

/*
 * The engine's own statements, below any module: connection setup, the ping, the migration run's
 * lock, LISTEN and its heartbeat. Like every other statement, they live in a *.queries.ts file.
 */

/** Settings every SQLite connection gets when it opens (and when it reopens). */
export function configureSqlite(handle: SQLite.Database): SQLite.Database {
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

/**
 * PRAGMA data_version changes when another connection commits to the file (SQLite docs,
 * "PRAGMA data_version"). Prepared once per handle: better-sqlite3's pragma() prepares anew on every call.
 */
export function prepareDataVersion(handle: SQLite.Database): SQLite.Statement {
  return handle.prepare('pragma data_version').pluck();
}

/** The cheapest round trip. */
export async function selectOne(db: Kysely<DB>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Names of the applied migrations; throws when the migration table does not exist yet. */
export async function appliedMigrationNames(db: Kysely<DB>): Promise<string[]> {
  const result = await sql<{ name: string }>`select name from gatehouse_migrations`.execute(db);
  return result.rows.map((r) => r.name);
}

/** SQLite: a transaction that takes the write lock at once (a second writer waits for busy_timeout). */
export async function beginImmediate(conn: Kysely<DB>): Promise<void> {
  await sql`begin immediate`.execute(conn);
}

export async function endTransaction(conn: Kysely<DB>, outcome: 'commit' | 'rollback'): Promise<void> {
  await sql.raw(outcome).execute(conn);
}

export async function listen(client: pg.Client, channel: string): Promise<void> {
  await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
}

/** `select 1` on a dedicated client (the LISTEN connection's heartbeat). */
export async function pingClient(client: pg.Client): Promise<void> {
  await client.query('select 1');
}
