import { identityLinked } from '../../../identity/index.ts';
import type { Db } from '../../../platform/db/schema.ts';

/**
 * Accounts (of `role`, when given, and active) whose only ways in are identities of the stored
 * providers: no password, no passkey, and no identity of `keptIssuer` (the `default` provider's,
 * which `POST /idp/verify` keeps serving while the `idp` module is on).
 */
export async function countProviderOnlyAccounts(
  db: Db,
  keptIssuer: string | null,
  role?: 'admin',
): Promise<number> {
  let q = db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('users.password_hash', 'is', null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb.selectFrom('passkeys').select('passkeys.id').whereRef('passkeys.user_id', '=', 'users.id'),
        ),
      ),
    )
    .where(identityLinked('users.id'));
  if (keptIssuer !== null) {
    q = q.where((eb) => eb.not(identityLinked('users.id', keptIssuer)));
  }
  if (role !== undefined) q = q.where('users.role', '=', role).where('users.status', '=', 'active');
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** Active admins. */
export async function countActiveAdmins(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('role', '=', 'admin')
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
