import { defineModule } from '../../kernel/module.ts';
import { oauthEndpoints } from './oauth.routes.ts';
import { sweepOauthModels } from './server/upkeep.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    oauth: true;
  }
}

export const oauthModule = defineModule({
  name: 'oauth',
  required: false,
  description: 'Authorization server: OAuth 2.1 and OpenID Connect provider',
  forms: ['FULL'],
  endpoints: oauthEndpoints,
  jobs: [
    // Expired models go, and keys changed elsewhere (rotation, another instance) rebuild the provider
    // before the next request needs it; nothing while the module is off.
    { name: 'oauth.sweep', what: 'oauth model sweep', everyMs: 60_000, run: sweepOauthModels },
  ],
  preconditions: {
    // Client secrets are sealed with SECRETS_KEY (docs/api.md §17), shared by every instance.
    unmet: (config, dialect) =>
      dialect === 'postgres' && config.secretsKey === null
        ? 'SECRETS_KEY must be set to enable the oauth module on PostgreSQL (client secrets are sealed with it; every instance needs the same key; e.g. `openssl rand -base64 32`)'
        : null,
  },
});
