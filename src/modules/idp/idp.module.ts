import { defineModule } from '../../kernel/module.ts';
import type { HealthCheck } from '../../platform/health-check.ts';
import { idpEndpoints } from './idp.routes.ts';
import { startIdp } from './oidc-client.ts';
import { pruneIdTokenUses } from './replay.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    idp: true;
  }
}

export const idpModule = defineModule({
  name: 'idp',
  required: false,
  description: 'Sign-in through an external OpenID Connect provider',
  forms: ['A', 'FULL'],
  start: (ctx) => startIdp(ctx.config, ctx.log),
  endpoints: idpEndpoints,
  jobs: [
    // Used ID tokens past their expiry linger at most this long. Idempotent, so every instance runs
    // it; only expired rows go, which no longer guard anything.
    {
      name: 'idp.prune',
      what: 'used ID token pruning',
      everyMs: 10 * 60_000,
      run: (ctx): Promise<unknown> => pruneIdTokenUses(ctx),
    },
  ],
  healthChecks: {
    // A provider nobody may sign in with (module off) does not count against the service's health.
    idp: (ctx, { seed }): Promise<HealthCheck> =>
      seed && ctx.modules.isEnabled('idp') ? seed.probe() : Promise.resolve({ status: 'disabled' }),
  },
});
