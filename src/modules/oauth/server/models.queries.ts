import type { Db, OauthModelsTable } from '../../../platform/db/schema.ts';

/** One stored oidc-provider model, as the adapter reads it back. */
export interface ModelRow {
  payload: string;
  uid_hash: string | null;
  expires_at: number | null;
  consumed_at: number | null;
}

/** Inserts or replaces a model under its id's hash (docs/api.md §17, "Storage"). */
export async function upsertModel(db: Db, row: Omit<OauthModelsTable, 'consumed_at'>): Promise<void> {
  await db
    .insertInto('oauth_models')
    .values({ ...row, consumed_at: null })
    .onConflict((oc) =>
      oc.columns(['model', 'id_hash']).doUpdateSet({
        payload: row.payload,
        grant_id: row.grant_id,
        account_id: row.account_id,
        client_id: row.client_id,
        uid_hash: row.uid_hash,
        user_code_hash: row.user_code_hash,
        expires_at: row.expires_at,
      }),
    )
    .execute();
}

export async function findModel(db: Db, model: string, idHash: string): Promise<ModelRow | undefined> {
  return db
    .selectFrom('oauth_models')
    .select(['payload', 'uid_hash', 'expires_at', 'consumed_at'])
    .where('model', '=', model)
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
}

export async function findModelBy(
  db: Db,
  model: string,
  column: 'uid_hash' | 'user_code_hash',
  hash: string,
): Promise<(ModelRow & { id_hash: string }) | undefined> {
  return db
    .selectFrom('oauth_models')
    .select(['id_hash', 'payload', 'uid_hash', 'expires_at', 'consumed_at'])
    .where('model', '=', model)
    .where(column, '=', hash)
    .executeTakeFirst();
}

/**
 * Marks a model used, once: true only for the call that found it unused, so of two requests
 * presenting the same code or refresh token at once exactly one wins, on either engine.
 */
export async function consumeModel(db: Db, model: string, idHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('oauth_models')
    .set({ consumed_at: now })
    .where('model', '=', model)
    .where('id_hash', '=', idHash)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The grant a stored model belongs to, if any. */
export async function findModelGrantId(db: Db, model: string, idHash: string): Promise<string | null> {
  const row = await db
    .selectFrom('oauth_models')
    .select('grant_id')
    .where('model', '=', model)
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
  return row?.grant_id ?? null;
}

/** Every token and code of a grant, of every kind (the grant itself is stored under its own id). */
export async function deleteAllModelsOfGrant(db: Db, grantId: string): Promise<void> {
  await db.deleteFrom('oauth_models').where('grant_id', '=', grantId).execute();
}

export async function deleteModel(db: Db, model: string, idHash: string): Promise<void> {
  await db.deleteFrom('oauth_models').where('model', '=', model).where('id_hash', '=', idHash).execute();
}

/** Every model of a grant, whatever its kind (the library calls it once per model name). */
export async function deleteModelsOfGrant(db: Db, model: string, grantId: string): Promise<void> {
  await db.deleteFrom('oauth_models').where('model', '=', model).where('grant_id', '=', grantId).execute();
}

/** Every grant, token and code of one account for one client (a connected app revoked). */
export async function deleteModelsOfAccountClient(
  db: Db,
  accountId: string,
  clientId: string,
): Promise<number> {
  const result = await db
    .deleteFrom('oauth_models')
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Expired models, for the periodic sweep. */
export async function deleteExpiredModels(db: Db, now: number): Promise<void> {
  await db.deleteFrom('oauth_models').where('expires_at', '<', now).execute();
}

/** A named application secret (app_secrets), or undefined. */
export async function readAppSecret(db: Db, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('app_secrets').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}

/** Stores a secret unless one of that name exists (of two instances racing, the first wins). */
export async function insertAppSecret(db: Db, name: string, value: string, now: number): Promise<boolean> {
  const result = await db
    .insertInto('app_secrets')
    .values({ name, value, created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** The account claims the provider releases (docs/api.md §17: `email`, `profile`). */
export async function findAccountRow(db: Db, id: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'email_verified', 'name', 'status', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Ties the provider's browser session (its uid's hash) to the Gatehouse session of its sign-in. */
export async function upsertSessionLink(db: Db, uidHash: string, sessionId: string): Promise<void> {
  await db
    .insertInto('oauth_session_links')
    .values({ uid_hash: uidHash, session_id: sessionId })
    .onConflict((oc) => oc.column('uid_hash').doUpdateSet({ session_id: sessionId }))
    .execute();
}

/** The Gatehouse session a provider browser session is tied to, or undefined. */
export async function findSessionLink(db: Db, uidHash: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('oauth_session_links')
    .select('session_id')
    .where('uid_hash', '=', uidHash)
    .executeTakeFirst();
  return row?.session_id;
}
