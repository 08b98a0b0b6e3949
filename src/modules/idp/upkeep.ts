import type { AppContext } from '../../kernel/context.types.ts';
import type { HealthCheck } from '../../platform/health-check.ts';
import { defaultProviderHealth, pruneIdTokenUses, type Upstreams } from '../providers/index.ts';

/*
 * The idp module's job and health check. The `default` provider (OIDC_ISSUER) and the used ID tokens
 * belong to the `providers` module, which idp reaches through its index only.
 */

/** The `idp.prune` job: used ID tokens past their expiry. */
export async function pruneUsedIdTokens(ctx: AppContext): Promise<void> {
  await pruneIdTokenUses(ctx);
}

/** The `idp` check: a provider nobody may sign in with (module off) does not count against the service's health. */
export function idpHealth(ctx: AppContext, upstreams: Upstreams): Promise<HealthCheck> {
  return ctx.modules.isEnabled('idp')
    ? defaultProviderHealth(ctx, upstreams)
    : Promise.resolve({ status: 'disabled' });
}
