import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, OauthClientsTable, OauthResourcesTable } from '../../../platform/db/schema.ts';

export type ClientRow = Selectable<OauthClientsTable>;
export type ResourceRow = Selectable<OauthResourcesTable>;

export async function findClientRow(db: Db, clientId: string): Promise<ClientRow | undefined> {
  return db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

export async function listClientRows(db: Db): Promise<ClientRow[]> {
  return db
    .selectFrom('oauth_clients')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('client_id')
    .execute();
}

export async function insertClientRow(db: Db, row: Insertable<OauthClientsTable>): Promise<void> {
  await db.insertInto('oauth_clients').values(row).execute();
}

export async function updateClientRow(
  db: Db,
  clientId: string,
  changes: Updateable<OauthClientsTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('oauth_clients')
    .set(changes)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteClientRow(db: Db, clientId: string): Promise<boolean> {
  const result = await db.deleteFrom('oauth_clients').where('client_id', '=', clientId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Every client whose `resources` names the identifier (clients are few: read all, filter here). */
export async function clientsUsingResource(db: Db, identifier: string): Promise<string[]> {
  const rows = await db.selectFrom('oauth_clients').select(['client_id', 'resources']).execute();
  return rows
    .filter((r) => (JSON.parse(r.resources) as string[]).includes(identifier))
    .map((r) => r.client_id);
}

export async function findResourceRow(db: Db, id: string): Promise<ResourceRow | undefined> {
  return db.selectFrom('oauth_resources').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findResourceByIdentifier(db: Db, identifier: string): Promise<ResourceRow | undefined> {
  return db.selectFrom('oauth_resources').selectAll().where('identifier', '=', identifier).executeTakeFirst();
}

export async function listResourceRows(db: Db): Promise<ResourceRow[]> {
  return db.selectFrom('oauth_resources').selectAll().orderBy('created_at', 'desc').orderBy('id').execute();
}

export async function insertResourceRow(db: Db, row: Insertable<OauthResourcesTable>): Promise<void> {
  await db.insertInto('oauth_resources').values(row).execute();
}

export async function updateResourceRow(
  db: Db,
  id: string,
  changes: Updateable<OauthResourcesTable>,
): Promise<boolean> {
  const result = await db.updateTable('oauth_resources').set(changes).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteResourceRow(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('oauth_resources').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
