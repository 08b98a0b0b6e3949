import type { Kysely } from 'kysely';
import { type MigrationResultSet, Migrator } from 'kysely/migration';
import { appliedMigrationNames, beginImmediate, endTransaction } from './database.queries.ts';
import { dialectOf } from './dialect.ts';
import { migrations } from './migrations/index.ts';
import type { DB } from './schema.ts';

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
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
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
    return await appliedMigrationNames(db);
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
    await beginImmediate(conn);
    let outcome: MigrationResultSet;
    try {
      outcome = await migrator(conn).migrateToLatest();
    } catch (err) {
      await endTransaction(conn, 'rollback');
      throw err;
    }
    await endTransaction(conn, outcome.error ? 'rollback' : 'commit');
    return outcome;
  });
}

/** Counts applied and pending migrations (health endpoints). */
export async function migrationStatus(db: Kysely<DB>): Promise<{ applied: number; pending: number }> {
  const list = await migrator(db).getMigrations();
  const applied = list.filter((m) => m.executedAt !== undefined).length;
  return { applied, pending: list.length - applied };
}
