import type { Kysely, Transaction } from 'kysely';
import { identityLinked } from '../../identity/index.ts';
import type { DB } from '../../platform/db/schema.ts';

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

/** Which other ways in count (their modules are on). */
export interface OtherWaysIn {
  passkeys: boolean;
  identities: boolean;
}

/**
 * Active accounts that could sign in only by e-mail: no password, and no passkey or linked external
 * identity that counts (`ways`). `role` narrows to admins. One statement.
 */
export async function countEmailOnlyAccounts(db: Db, ways: OtherWaysIn, role?: 'admin'): Promise<number> {
  let query = db
    .selectFrom('users as u')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('u.status', '=', 'active')
    .where('u.password_hash', 'is', null);
  if (role) query = query.where('u.role', '=', role);
  if (ways.passkeys) {
    query = query.where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('passkeys as p').select('p.id').whereRef('p.user_id', '=', 'u.id'))),
    );
  }
  if (ways.identities) {
    query = query.where(({ not }) => not(identityLinked('u.id')));
  }
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Active admins (any way in). */
export async function countActiveAdmins(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', '=', 'active')
    .where('role', '=', 'admin')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
