import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { ensureSqliteDirectory } from './database.ts';
import { beginLock, endLock, readHolder, recordHolder } from './serve-lock.queries.ts';

/** Another process serves the file: its one line names it. */
export class ServeLockError extends Error {
  override name = 'ServeLockError';
}

/**
 * One serving process per SQLite file (docs/deployment.md): `serve` holds a write lock on
 * `<database>.lock`, a small SQLite file beside the database, for as long as it runs. The lock is the
 * operating system's (SQLite's file locks): it ends with the process however it ends, SIGKILL
 * included, so a crash leaves nothing stale to clean up, and a reused PID cannot hold it. The
 * database itself is not locked: `migrate`, `create-admin` and the `users` commands still open it
 * briefly while the server runs (SQLite orders their writes). The file stays after a stop, holding
 * no lock; it is never deleted, since a process still holding the old file open could lock it.
 * Returns the release function; a `sqlite::memory:` or PostgreSQL URL needs no lock.
 */
export function acquireServeLock(databaseUrl: string): () => void {
  if (!databaseUrl.startsWith('sqlite:')) return () => {};
  const path = databaseUrl.slice('sqlite:'.length);
  if (path === ':memory:') return () => {};
  // The database's own checks (a file in the way, a path under /proc): the same one line, at once.
  ensureSqliteDirectory(path);
  // The same file by another path (a symlink) still finds the same lock.
  const file = `${existsSync(path) ? realpathSync(path) : resolve(path)}.lock`;

  const handle = new SQLite(file, { timeout: 0 });
  try {
    beginLock(handle);
    recordHolder(handle, process.pid, Date.now());
    // The row is committed, so a refused process can read it; the lock is taken again at once. A
    // process that took it in between holds it now, and this one is refused (below).
    beginLock(handle);
  } catch (err) {
    const recorded = isBusy(err) ? readHolder(handle) : null;
    const holder = recorded === process.pid ? null : recorded;
    handle.close();
    if (!isBusy(err)) throw err;
    throw new ServeLockError(
      `the database ${path} is already served by another Gatehouse${holder === null ? '' : ` (process ${holder})`}: run one serving process per SQLite file (stop that one first, or use PostgreSQL for several instances)`,
    );
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    endLock(handle);
    handle.close();
  };
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
