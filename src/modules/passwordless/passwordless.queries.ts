import type { Kysely, Transaction } from 'kysely';
import { identityLinked } from '../../identity/index.ts';
import type { DB } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

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
