import { sql } from 'kysely';
import type { Db } from '../platform/db/schema.ts';

/** The stored module switches (docs/api.md §2): one row per module an admin has toggled. */
export async function readModuleOverrides(db: Db): Promise<Array<{ name: string; enabled: number }>> {
  return db.selectFrom('module_overrides').select(['name', 'enabled']).execute();
}

export async function upsertModuleOverride(
  db: Db,
  name: string,
  enabled: boolean,
  now: number,
): Promise<void> {
  await db
    .insertInto('module_overrides')
    .values({ name, enabled: enabled ? 1 : 0, updated_at: now })
    .onConflict((oc) => oc.column('name').doUpdateSet({ enabled: enabled ? 1 : 0, updated_at: now }))
    .execute();
}

/** PostgreSQL NOTIFY; in a transaction it is delivered at commit, and not at all on rollback. */
export async function notify(db: Db, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}
