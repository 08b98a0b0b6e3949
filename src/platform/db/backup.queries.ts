import type SQLite from 'better-sqlite3';

/*
 * The statements `gatehouse backup` sends to a SQLite file directly (docs/operations.md, "Backups").
 * The copy itself is SQLite's online backup API (better-sqlite3's `backup()`), not a statement.
 */

/**
 * Makes the copy one self-contained file: rollback journal instead of WAL, so no -wal or -shm file
 * belongs with it (the service switches a restored file back to WAL when it opens it).
 */
export function useRollbackJournal(handle: SQLite.Database): void {
  handle.pragma('journal_mode = DELETE');
}

/** SQLite's quick integrity check: 'ok' when the file is sound. */
export function quickCheck(handle: SQLite.Database): string {
  return String(handle.pragma('quick_check', { simple: true }));
}

/** How many migrations a copy has applied (0 when it has no migration table). */
export function appliedMigrationCount(handle: SQLite.Database): number {
  const table = handle
    .prepare("select 1 from sqlite_master where type = 'table' and name = 'gatehouse_migrations'")
    .get();
  if (!table) return 0;
  return Number(handle.prepare('select count(*) from gatehouse_migrations').pluck().get());
}
