import type { AppContext } from '../../../kernel/context.types.ts';
import type { ModuleName } from '../../../kernel/module-state.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { Db } from '../../../platform/db/schema.ts';
import { countActiveAdmins, countProviderOnlyAccounts } from './module-in-use.queries.ts';

/**
 * docs/api.md §16 "A sign-in method never silently disappears", for `providers`: switching it off
 * while accounts can sign in only through its providers (no password, no passkey, no identity of the
 * seed's provider while `idp` serves it) answers 409 `module_in_use` naming how many, unless
 * `force`; `force` is refused too when it would leave no active admin able to sign in. Runs in the
 * toggle's transaction. Returns how many such accounts there are (0 when it is not this switch).
 */
export async function checkProvidersOff(
  ctx: AppContext,
  db: Db,
  name: ModuleName,
  force: boolean,
): Promise<number> {
  if (name !== 'providers' || !ctx.modules.isEnabled('providers')) return 0;
  const kept = ctx.modules.isEnabled('idp') ? ctx.config.oidc.issuer : null;
  const accounts = await countProviderOnlyAccounts(db, kept);
  if (accounts === 0) return 0;
  const them = accounts === 1 ? '1 account signs' : `${accounts} accounts sign`;
  if (!force) {
    throw new ApiError('module_in_use', {
      detail: `${them} in only through external providers; while providers is off they cannot sign in (a password reset or an operator can give them another way). Send {"enabled": false, "force": true} to switch it off anyway`,
    });
  }
  const stranded = await countProviderOnlyAccounts(db, kept, 'admin');
  if (stranded > 0 && stranded >= (await countActiveAdmins(db))) {
    throw new ApiError('module_in_use', {
      detail:
        'Switching providers off would leave no active admin able to sign in: every active admin signs in only through a provider',
    });
  }
  return accounts;
}
