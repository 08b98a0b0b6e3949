import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB, PasskeysTable, WebauthnChallengesTable } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Stores a challenge (5 minutes, single use). */
export async function insertChallenge(db: Db, row: WebauthnChallengesTable): Promise<void> {
  await db.insertInto('webauthn_challenges').values(row).execute();
}

/**
 * Consumes a live challenge of a purpose by one conditional write and returns it; undefined when it
 * is unknown, used, expired or of another purpose. Any instance can answer: the row is the state.
 */
export async function consumeChallenge(
  db: Db,
  id: string,
  purpose: WebauthnChallengesTable['purpose'],
  now: number,
): Promise<Pick<WebauthnChallengesTable, 'challenge' | 'user_id'> | undefined> {
  return db
    .updateTable('webauthn_challenges')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['challenge', 'user_id'])
    .executeTakeFirst();
}

/** The user's passkeys, oldest first. */
export async function listPasskeys(db: Db, userId: string): Promise<PasskeysTable[]> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** A passkey by its credential id (any user). */
export async function findPasskeyByCredential(
  db: Db,
  credentialId: string,
): Promise<PasskeysTable | undefined> {
  return db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

/** Stores a new passkey. */
export async function insertPasskey(db: Db, row: PasskeysTable): Promise<void> {
  await db.insertInto('passkeys').values(row).execute();
}

/** Deletes one of the user's passkeys; false when the user has none by that id. */
export async function deletePasskey(db: Db, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('passkeys')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * Records a use under the counter rule of docs/api.md §13, as one compare-and-set: a stored 0 accepts
 * 0 (synced passkeys do not count), otherwise the counter must grow. Of two replays of one
 * assertion, at most one passes.
 */
export async function recordPasskeyUse(
  db: Db,
  id: string,
  expectedCounter: number,
  newCounter: number,
  backedUp: boolean,
  now: number,
): Promise<boolean> {
  if (!(newCounter > expectedCounter || (expectedCounter === 0 && newCounter === 0))) return false;
  const result = await db
    .updateTable('passkeys')
    .set({ counter: newCounter, last_used_at: now, backed_up: backedUp ? 1 : 0 })
    .where('id', '=', id)
    .where(
      newCounter === 0 ? sql<boolean>`counter = 0` : sql<boolean>`counter < cast(${newCounter} as bigint)`,
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
