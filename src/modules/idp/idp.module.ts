import { defineModule } from '../../kernel/module.ts';
import { createUpstreams } from '../providers/index.ts';
import { idpEndpoints } from './idp.routes.ts';
import { idpHealth, pruneUsedIdTokens } from './upkeep.ts';

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
  // The `default` provider's discovery and keys (OIDC_ISSUER), fetched once per app.
  start: () => createUpstreams(),
  endpoints: idpEndpoints,
  jobs: [
    // Used ID tokens past their expiry linger at most this long. Idempotent, so every instance runs
    // it; only expired rows go, which no longer guard anything.
    { name: 'idp.prune', what: 'used ID token pruning', everyMs: 10 * 60_000, run: pruneUsedIdTokens },
  ],
  healthChecks: { idp: idpHealth },
});
