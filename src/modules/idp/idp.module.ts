import type { HealthCheck } from '../../kernel/health-check.ts';
import { defineModule } from '../../kernel/module.ts';
import { idpEndpoints } from './idp.routes.ts';
import { pruneIdTokenUses } from './replay.ts';

export const idpModule = defineModule({
  name: 'idp',
  required: false,
  description: 'Sign-in through an external OpenID Connect provider',
  forms: ['A', 'FULL'],
  endpoints: idpEndpoints,
  jobs: [
    // Used ID tokens past their expiry linger at most this long. Idempotent, so every instance runs
    // it; only expired rows go, which no longer guard anything.
    { name: 'idp.prune', what: 'used ID token pruning', everyMs: 10 * 60_000, run: pruneIdTokenUses },
  ],
  healthChecks: {
    // A provider nobody may sign in with (module off) does not count against the service's health.
    idp: (ctx): Promise<HealthCheck> =>
      ctx.oidc && ctx.modules.isEnabled('idp') ? ctx.oidc.probe() : Promise.resolve({ status: 'disabled' }),
  },
});
