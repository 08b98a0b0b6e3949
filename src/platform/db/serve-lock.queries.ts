import type SQLite from 'better-sqlite3';

/*
 * The serve lock's statements (src/platform/db/serve-lock.ts). The lock file is a small SQLite database of its
 * own: holding a write transaction on it is the lock, and the file's one row names the holder.
 */

/** Takes the file's write lock (RESERVED), or throws SQLITE_BUSY at once (the handle has no busy timeout). */
export function beginLock(handle: SQLite.Database): void {
  handle.exec('begin immediate');
}

export function endLock(handle: SQLite.Database): void {
  if (handle.inTransaction) handle.exec('rollback');
}

/** Records the holder and commits, so that a refused process can name it. */
export function recordHolder(handle: SQLite.Database, pid: number, startedAt: number): void {
  handle.exec('create table if not exists holder (pid integer not null, started_at integer not null)');
  handle.exec('delete from holder');
  handle.prepare('insert into holder (pid, started_at) values (?, ?)').run(pid, startedAt);
  handle.exec('commit');
}

/** The recorded holder's process id, or null (none recorded yet). */
export function readHolder(handle: SQLite.Database): number | null {
  try {
    const row = handle.prepare('select pid from holder').get() as { pid: number } | undefined;
    return row?.pid ?? null;
  } catch {
    return null;
  }
}
