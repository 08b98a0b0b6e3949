import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleName } from '../../kernel/module-state.ts';
import { ApiError } from '../../platform/api-error.ts';

/** docs/api.md §23: SAML connections are providers owned by organizations. */
const NEEDS: readonly ModuleName[] = ['providers', 'organizations'];

/**
 * The module switch's rule for `sso` (docs/api.md §23, settled): switching it on while `providers`
 * or `organizations` is off answers 409 `module_unavailable`; switching one of those off while `sso`
 * is on answers 409 `module_in_use`, unless `force` (docs/api.md §16's override), which switches
 * `sso` off too: sso is never on without what it needs. Returns whether sso must go off as well.
 */
export function checkSsoNeeds(ctx: AppContext, name: ModuleName, enabled: boolean, force: boolean): boolean {
  if (enabled && name === 'sso' && !ctx.modules.isEnabled('sso')) {
    const off = NEEDS.filter((n) => !ctx.modules.isEnabled(n));
    if (off.length > 0) {
      throw new ApiError('module_unavailable', {
        detail: `sso needs ${off.join(' and ')}: switch ${off.length === 1 ? 'it' : 'them'} on first`,
      });
    }
  }
  if (!enabled && NEEDS.includes(name) && ctx.modules.isEnabled(name) && ctx.modules.isEnabled('sso')) {
    if (!force) {
      throw new ApiError('module_in_use', {
        detail: `sso needs ${name}: switch sso off first, or send {"enabled": false, "force": true} to switch both off`,
      });
    }
    return true;
  }
  return false;
}
