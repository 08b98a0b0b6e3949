import type { Kysely, Transaction } from 'kysely';
import {
  activeAdminFactors,
  canSignIn,
  countAccountsWithFactors,
  type FactorModules,
} from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleName } from '../../kernel/module-state.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { DB } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

const FACTORS = { mfa: 'a second factor (TOTP or a passkey)', passkeys: 'a passkey' } as const;

/**
 * docs/api.md §16 "A sign-in method never silently disappears": switching `mfa` or `passkeys` off
 * while accounts hold its factors answers 409 `module_in_use` naming how many, unless `force`;
 * `force` is refused too when no active admin could sign in afterwards (by the rule of
 * src/identity/factors/census.ts: with the module off, an admin whose every factor needs it
 * cannot). Runs in the toggle's transaction, so the count and the switch are one decision. Returns how many accounts
 * hold such factors (0 when it is not such a switch), for the audit entry.
 */
export async function checkFactorModuleOff(
  ctx: AppContext,
  db: Db,
  name: ModuleName,
  force: boolean,
): Promise<number> {
  if ((name !== 'mfa' && name !== 'passkeys') || !ctx.modules.isEnabled(name)) return 0;
  if (name === 'mfa' && ctx.config.requireMfa !== 'off') {
    // REQUIRE_MFA needs mfa (the start refuses without it): no `force` switches it off under it.
    throw new ApiError('module_in_use', {
      detail: `REQUIRE_MFA=${ctx.config.requireMfa} needs the mfa module; set REQUIRE_MFA=off and restart before switching it off`,
    });
  }
  const accounts = await countAccountsWithFactors(db, name);
  if (accounts === 0) return 0;
  const them = accounts === 1 ? '1 account holds' : `${accounts} accounts hold`;
  if (!force) {
    throw new ApiError('module_in_use', {
      detail: `${them} ${FACTORS[name]}; while ${name} is off they cannot sign in or reset their password until their second factors are reset (gatehouse users mfa-reset, or an admin's reset). Send {"enabled": false, "force": true} to switch it off anyway`,
    });
  }
  const after: FactorModules = {
    mfa: name === 'mfa' ? false : ctx.modules.isEnabled('mfa'),
    passkeys: name === 'passkeys' ? false : ctx.modules.isEnabled('passkeys'),
  };
  const admins = await activeAdminFactors(db);
  if (!admins.some((admin) => canSignIn(admin, after))) {
    throw new ApiError('module_in_use', {
      detail: `Switching ${name} off would leave no active admin able to sign in: every active admin holds ${FACTORS[name]} that needs it. Reset one admin's second factors first (gatehouse users mfa-reset)`,
    });
  }
  return accounts;
}
