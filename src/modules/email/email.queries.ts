import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Marks an active account's address verified, only while it is still `email`; true when it was. */
export async function markEmailVerified(
  db: Db,
  userId: string,
  email: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ email_verified: 1, updated_at: now })
    .where('id', '=', userId)
    .where('email', '=', email)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Switches an active account to a proven new address (verified by the link that proved it); true
 * when the account was active. A taken address fails on the unique index (the caller maps it).
 */
export async function switchEmail(db: Db, userId: string, email: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ email, email_verified: 1, updated_at: now })
    .where('id', '=', userId)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
