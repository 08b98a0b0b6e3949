import type { Db } from '../../../platform/db/schema.ts';

/**
 * Reserves an ID token's hash until `expiresAt` (docs/api.md §16): true when this call inserted it,
 * false when a row already holds it. The primary key decides, so two uses on any instances never
 * both win (PostgreSQL's ON CONFLICT waits for a concurrent inserter's commit or rollback).
 */
export async function reserveIdTokenUse(db: Db, tokenHash: string, expiresAt: number): Promise<boolean> {
  const result = await db
    .insertInto('id_token_uses')
    .values({ token_hash: tokenHash, expires_at: expiresAt })
    .onConflict((oc) => oc.column('token_hash').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Deletes the used-token rows that expired before `now`; returns how many. */
export async function deleteExpiredIdTokenUses(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('id_token_uses').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
