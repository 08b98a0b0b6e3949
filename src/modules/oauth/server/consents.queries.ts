import type { Db } from '../../../platform/db/schema.ts';

export interface ConsentRow {
  scopes: string;
  resources: string;
}

export async function findConsent(db: Db, userId: string, clientId: string): Promise<ConsentRow | undefined> {
  return db
    .selectFrom('oauth_consents')
    .select(['scopes', 'resources'])
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
}

/** Stores the whole consent of (user, client); the caller has merged the old one in. */
export async function upsertConsent(
  db: Db,
  row: { user_id: string; client_id: string; scopes: string; resources: string },
  now: number,
): Promise<void> {
  await db
    .insertInto('oauth_consents')
    .values({ ...row, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'client_id'])
        .doUpdateSet({ scopes: row.scopes, resources: row.resources, updated_at: now }),
    )
    .execute();
}

/** A user's consents with their clients' names, newest first. */
export async function listConsents(db: Db, userId: string) {
  return db
    .selectFrom('oauth_consents')
    .innerJoin('oauth_clients', 'oauth_clients.client_id', 'oauth_consents.client_id')
    .select([
      'oauth_consents.client_id',
      'oauth_clients.name',
      'oauth_consents.scopes',
      'oauth_consents.resources',
      'oauth_consents.created_at',
      'oauth_consents.updated_at',
    ])
    .where('oauth_consents.user_id', '=', userId)
    .orderBy('oauth_consents.updated_at', 'desc')
    .execute();
}

export async function deleteConsent(db: Db, userId: string, clientId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('oauth_consents')
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
