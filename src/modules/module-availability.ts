import { ConfigError } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { ModuleName } from './module-state.ts';

type Check = () => string | null;
const checks = new WeakMap<AppContext, Map<ModuleName, Check>>();

/**
 * Declares what a module needs to be switched on (a setting, a key). When the module is on at
 * start and the need is unmet, the start stops with the check's one line (naming the variable);
 * switching it on at run time answers 409 `module_unavailable` (src/modules/admin/).
 */
export function requireForModule(ctx: AppContext, name: ModuleName, check: Check): void {
  let map = checks.get(ctx);
  if (!map) {
    map = new Map();
    checks.set(ctx, map);
  }
  map.set(name, check);
  const problem = ctx.modules.isEnabled(name) ? check() : null;
  if (problem !== null) throw new ConfigError(problem);
}

/** Why a module cannot be switched on now, or null when it can. */
export function moduleUnavailable(ctx: AppContext, name: ModuleName): string | null {
  return checks.get(ctx)?.get(name)?.() ?? null;
}
