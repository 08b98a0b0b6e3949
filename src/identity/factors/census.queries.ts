import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** What one account holds, whatever the module switches say (census.ts). */
export interface HeldFactors {
  totp: boolean;
  passkeys: number;
  recoveryCodes: number;
}

/** The user's confirmed TOTP, passkeys and unused recovery codes, in one statement. */
export async function findHeldFactors(db: Db, userId: string): Promise<HeldFactors> {
  const row = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom('mfa_totp')
        .select((e) => e.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', userId)
        .where('confirmed_at', 'is not', null)
        .as('totp'),
      eb
        .selectFrom('passkeys')
        .select((e) => e.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', userId)
        .as('passkeys'),
      eb
        .selectFrom('mfa_recovery_codes')
        .select((e) => e.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .as('recovery'),
    ])
    .executeTakeFirstOrThrow();
  return {
    totp: Number(row.totp) > 0,
    passkeys: Number(row.passkeys),
    recoveryCodes: Number(row.recovery),
  };
}

/**
 * How many accounts hold a factor of the module: `passkeys` a passkey; `mfa` a confirmed TOTP or a
 * passkey (a passkey is the second factor of a password sign-in only through the mfa module).
 */
export async function countAccountsWithFactors(db: Db, module: 'mfa' | 'passkeys'): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where((eb) => {
      const passkey = eb.exists(
        eb.selectFrom('passkeys').select('passkeys.id').whereRef('passkeys.user_id', '=', 'users.id'),
      );
      if (module === 'passkeys') return passkey;
      const totp = eb.exists(
        eb
          .selectFrom('mfa_totp')
          .select('mfa_totp.user_id')
          .whereRef('mfa_totp.user_id', '=', 'users.id')
          .where('mfa_totp.confirmed_at', 'is not', null),
      );
      return eb.or([totp, passkey]);
    })
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Every active admin with the factors it holds (for "would any admin still be able to sign in?"). */
export async function activeAdminFactors(db: Db): Promise<Array<{ id: string } & HeldFactors>> {
  const rows = await db
    .selectFrom('users')
    .select((eb) => [
      'users.id',
      eb
        .selectFrom('mfa_totp')
        .select((e) => e.fn.countAll<number | string>().as('n'))
        .whereRef('mfa_totp.user_id', '=', 'users.id')
        .where('mfa_totp.confirmed_at', 'is not', null)
        .as('totp'),
      eb
        .selectFrom('passkeys')
        .select((e) => e.fn.countAll<number | string>().as('n'))
        .whereRef('passkeys.user_id', '=', 'users.id')
        .as('passkeys'),
    ])
    .where('users.role', '=', 'admin')
    .where('users.status', '=', 'active')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    totp: Number(r.totp) > 0,
    passkeys: Number(r.passkeys),
    recoveryCodes: 0,
  }));
}
