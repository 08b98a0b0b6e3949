import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleName } from '../../kernel/module-state.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { DB } from '../../platform/db/schema.ts';
import { countActiveAdmins, countEmailOnlyAccounts, type OtherWaysIn } from './passwordless.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

/**
 * docs/api.md §16 "A sign-in method never silently disappears", for `passwordless`: switching it off
 * while active accounts have no other way in (no password; no passkey while `passkeys` is on; no
 * linked identity while `idp` is on) answers 409 `module_in_use` naming how many, unless `force`;
 * `force` is refused too when no active admin could sign in afterwards. Runs in the toggle's
 * transaction. Returns how many accounts had no other way in (0 when it is not this switch).
 */
export async function checkPasswordlessOff(
  ctx: AppContext,
  db: Db,
  name: ModuleName,
  force: boolean,
): Promise<number> {
  if (name !== 'passwordless' || !ctx.modules.isEnabled('passwordless')) return 0;
  const ways: OtherWaysIn = {
    passkeys: ctx.modules.isEnabled('passkeys'),
    identities: ctx.modules.isEnabled('idp'),
  };
  const accounts = await countEmailOnlyAccounts(db, ways);
  if (accounts === 0) return 0;
  const them = accounts === 1 ? '1 account has' : `${accounts} accounts have`;
  if (!force) {
    throw new ApiError('module_in_use', {
      detail: `${them} no other way to sign in than by e-mail (no password, passkey or linked identity); while passwordless is off they cannot sign in until they set a password (recovery) or an admin sets one. Send {"enabled": false, "force": true} to switch it off anyway`,
    });
  }
  const admins = await countActiveAdmins(db);
  if (admins > 0 && (await countEmailOnlyAccounts(db, ways, 'admin')) === admins) {
    throw new ApiError('module_in_use', {
      detail:
        'Switching passwordless off would leave no active admin able to sign in: every active admin signs in only by e-mail. Give one admin a password first',
    });
  }
  return accounts;
}
