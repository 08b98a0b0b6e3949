import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, IdpProvidersTable } from '../../../platform/db/schema.ts';

export type ProviderRow = Selectable<IdpProvidersTable>;

/** Every stored provider, by name. */
export function listProviderRows(db: Db): Promise<ProviderRow[]> {
  return db.selectFrom('idp_providers').selectAll().orderBy('name').execute();
}

/** One provider by name. */
export function findProviderRow(db: Db, name: string): Promise<ProviderRow | undefined> {
  return db.selectFrom('idp_providers').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Inserts a provider; a taken name is a unique violation. */
export async function insertProviderRow(db: Db, row: Insertable<IdpProvidersTable>): Promise<void> {
  await db.insertInto('idp_providers').values(row).execute();
}

/** Updates a provider; false when there is none of that name. */
export async function updateProviderRow(
  db: Db,
  name: string,
  set: Updateable<IdpProvidersTable>,
): Promise<boolean> {
  const result = await db.updateTable('idp_providers').set(set).where('name', '=', name).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes a provider; false when there is none of that name. */
export async function deleteProviderRow(db: Db, name: string): Promise<boolean> {
  const result = await db.deleteFrom('idp_providers').where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
