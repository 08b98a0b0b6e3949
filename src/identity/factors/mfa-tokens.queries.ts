import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB, MfaTokensTable } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Stores a new mfa_token (hash only). */
export async function insertMfaToken(db: Db, row: MfaTokensTable): Promise<void> {
  await db.insertInto('mfa_tokens').values(row).execute();
}

/** An mfa_token by its hash, whatever its state. */
export async function findMfaToken(db: Db, tokenHash: string): Promise<MfaTokensTable | undefined> {
  return db.selectFrom('mfa_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/**
 * Counts one try on a live token before its code is checked: one conditional write, so parallel
 * requests can never try more than `maxTries` codes on one token.
 */
export async function countMfaTokenTry(db: Db, id: string, now: number, maxTries: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_tokens')
    .set({ tries: sql<number>`tries + 1` })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('tries', '<', maxTries)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks a token used (the sign-in it started is complete); false when another request got there first. */
export async function consumeMfaToken(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_tokens')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks every unused `mfa_token` of a user as used (a half-finished sign-in cannot be completed). */
export async function endMfaTokensOfUser(db: Db, userId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('mfa_tokens')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
