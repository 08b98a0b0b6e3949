import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleName } from '../../kernel/module-state.ts';
import { ApiError } from '../../platform/api-error.ts';

/** docs/api.md §23: SAML connections are providers owned by organizations. */
const NEEDS: readonly ModuleName[] = ['providers', 'organizations'];

/**
 * The module switch's rule for `sso` (docs/api.md §23, settled): switching it on while `providers`
 * or `organizations` is off answers 409 `module_unavailable`; switching one of those off while `sso`
 * is on answers 409 `module_in_use`. Nothing changes then.
 */
export function checkSsoNeeds(ctx: AppContext, name: ModuleName, enabled: boolean): void {
  if (enabled && name === 'sso' && !ctx.modules.isEnabled('sso')) {
    const off = NEEDS.filter((n) => !ctx.modules.isEnabled(n));
    if (off.length > 0) {
      throw new ApiError('module_unavailable', {
        detail: `sso needs ${off.join(' and ')}: switch ${off.length === 1 ? 'it' : 'them'} on first`,
      });
    }
  }
  if (!enabled && NEEDS.includes(name) && ctx.modules.isEnabled(name) && ctx.modules.isEnabled('sso')) {
    throw new ApiError('module_in_use', { detail: `sso needs ${name}: switch sso off first` });
  }
}
