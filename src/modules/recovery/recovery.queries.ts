import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/**
 * Sets the password of a reset: the new hash, and `email_verified` (the mailbox is proven). Only
 * while the account is still active at the address the link was sent to; true when it was.
 */
export async function setPasswordFromReset(
  db: Db,
  userId: string,
  email: string,
  passwordHash: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: passwordHash, email_verified: 1, updated_at: now })
    .where('id', '=', userId)
    .where('email', '=', email)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
