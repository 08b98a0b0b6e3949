import {
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { appliedMigrationCount, quickCheck, useRollbackJournal } from './backup.queries.ts';

/** Why a backup could not be made: one line for the operator. */
export class BackupError extends Error {}

export interface BackupResult {
  bytes: number;
  migrations: number;
  /** The copy of `<database>.secrets-key` (the key generated when SECRETS_KEY is unset), if there is one. */
  keyFile: string | null;
}

/**
 * Copies a SQLite database file to `target` while the service may be running (docs/operations.md,
 * "Backups"). SQLite's online backup API reads one consistent snapshot, the WAL's committed pages
 * included, so the copy needs no -wal file beside it; the service's writers are not blocked (they
 * restart the copy's pass at most, which SQLite handles). The source is opened read-only and with
 * no pragmas: the copy never writes to the live file nor takes its write lock, so it works beside
 * a running server and whatever lock that server holds on its own lock file.
 * The copy is written to a temporary file in the target's folder, checked, then moved into place:
 * a failed copy never leaves a half-written `target`. Without `force`, an existing `target` is
 * refused, also if it appears while the copy runs (the final step is a hard link, which never
 * replaces a file).
 */
export async function backupSqlite(source: string, target: string, force: boolean): Promise<BackupResult> {
  if (source === ':memory:')
    throw new BackupError('an in-memory database (sqlite::memory:) has nothing to back up');
  const from = resolve(source);
  const to = resolve(target);
  if (from === to) throw new BackupError('the backup file is the database itself; name another file');
  if (!existsSync(from)) throw new BackupError(`no database file at ${from}`);
  if (!force && existsSync(to)) {
    throw new BackupError(`${to} already exists; choose a new name or pass --force to replace it`);
  }
  if (!existsSync(dirname(to))) throw new BackupError(`the folder ${dirname(to)} does not exist`);
  const partial = join(dirname(to), `.${basename(to)}.partial-${process.pid}`);
  let handle: SQLite.Database | null = null;
  try {
    try {
      handle = new SQLite(from, { readonly: true, fileMustExist: true });
      await handle.backup(partial);
    } catch (err) {
      throw new BackupError(`could not read ${from}: ${messageOf(err)}`);
    } finally {
      handle?.close();
    }
    const copy = new SQLite(partial, { fileMustExist: true });
    let migrations: number;
    try {
      useRollbackJournal(copy);
      const check = quickCheck(copy);
      if (check !== 'ok') throw new BackupError(`the copy failed SQLite's integrity check: ${check}`);
      migrations = appliedMigrationCount(copy);
    } finally {
      copy.close();
    }
    // Owner only: the copy holds the signing keys and the stored secrets (docs/operations.md).
    chmodSync(partial, 0o600);
    if (force) renameSync(partial, to);
    else {
      try {
        linkSync(partial, to);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
          throw new BackupError(`${to} already exists; choose a new name or pass --force to replace it`);
        }
        throw err;
      }
    }
    return { bytes: statSync(to).size, migrations, keyFile: copyKeyFile(from, to, force) };
  } finally {
    for (const file of [partial, `${partial}-wal`, `${partial}-shm`]) rmSync(file, { force: true });
  }
}

/**
 * Without SECRETS_KEY, second-factor secrets are sealed with `<database>.secrets-key`
 * (src/identity/tokens/secrets-key.ts): a copy of the database without it could not open them, so it is
 * copied beside the backup as `<target>.secrets-key`, owner only.
 */
function copyKeyFile(from: string, to: string, force: boolean): string | null {
  const key = `${from}.secrets-key`;
  if (!existsSync(key)) return null;
  const target = `${to}.secrets-key`;
  try {
    copyFileSync(key, target, force ? 0 : constants.COPYFILE_EXCL);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new BackupError(`${target} already exists; choose a new name or pass --force to replace it`);
    }
    throw err;
  }
  chmodSync(target, 0o600);
  return target;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
