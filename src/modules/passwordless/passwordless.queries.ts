import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/**
 * An e-mail sign-in proves the mailbox (docs/api.md §20): `email_verified` becomes true, only while
 * the account is still active at the address the pair was sent to. True when it was.
 */
export async function markMailboxProven(
  db: Db,
  userId: string,
  email: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    // updated_at moves only when the flag does: a sign-in by an already proven address changes nothing.
    .set((eb) => ({
      email_verified: 1,
      updated_at: eb.case().when('email_verified', '=', 1).then(eb.ref('updated_at')).else(now).end(),
    }))
    .where('id', '=', userId)
    .where('email', '=', email)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
