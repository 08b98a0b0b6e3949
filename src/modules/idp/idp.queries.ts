import type { Selectable } from 'kysely';
import type { Db, IdentitiesTable } from '../../platform/db/schema.ts';

export type IdentityRow = Selectable<IdentitiesTable>;

/** The identity of (issuer, subject), if linked. */
export function findIdentity(db: Db, issuer: string, subject: string): Promise<IdentityRow | undefined> {
  return db
    .selectFrom('identities')
    .selectAll()
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

/** Whether any provider identity is linked to the user. */
export async function hasIdentities(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('identities')
    .select('id')
    .where('user_id', '=', userId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Links an identity to a user; fails with a unique violation when (issuer, subject) is already linked. */
export async function insertIdentity(db: Db, row: IdentityRow): Promise<void> {
  await db.insertInto('identities').values(row).execute();
}

/** Records the email the provider last reported for an identity. */
export async function updateIdentityEmail(db: Db, id: string, email: string | null): Promise<void> {
  await db.updateTable('identities').set({ email }).where('id', '=', id).execute();
}

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
