import { defineModule } from '../../kernel/module.ts';
import { adminEndpoints } from './admin/admin.routes.ts';
import { flowEndpoints } from './flow/flow.routes.ts';
import { pruneFlows } from './flow/prune.ts';
import { createUpstreams } from './upstream/upstream.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    providers: true;
  }
}

export const providersModule = defineModule({
  name: 'providers',
  required: false,
  description: 'Many external sign-in providers on the hosted pages',
  forms: ['FULL'],
  // The providers' discovery and keys, fetched once per app (and again when a provider changes).
  start: () => createUpstreams(),
  endpoints: (ctx, _modules, upstreams) => [...adminEndpoints(ctx), ...flowEndpoints(ctx, upstreams)],
  jobs: [
    // Expired flows guard nothing; idempotent, so every instance runs it.
    { name: 'providers.prune', what: 'expired provider flow pruning', everyMs: 10 * 60_000, run: pruneFlows },
  ],
  preconditions: {
    // docs/api.md §10: provider secrets are sealed with the key every instance shares.
    unmet: (config, dialect) =>
      dialect === 'postgres' && config.secretsKey === null
        ? 'SECRETS_KEY must be set to enable the providers module on PostgreSQL (every instance needs the same key; e.g. `openssl rand -base64 32`)'
        : null,
  },
});
