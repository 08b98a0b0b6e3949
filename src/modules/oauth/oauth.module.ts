import type { FastifyReply, FastifyRequest } from 'fastify';
import { defineModule } from '../../kernel/module.ts';
import { oauthEndpoints } from './oauth.routes.ts';
import { createAuthorizationServer } from './server/authorization-server.ts';
import { passToAuthorizationServer } from './server/mount.ts';
import { sweepOauthModels, watchAuthorizationServer } from './server/upkeep.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    oauth: true;
  }
  interface ModuleOffers {
    /** Hands a request to this app's one authorization server (auth's discovery documents while oauth is on). */
    oauth: { pass(request: FastifyRequest, reply: FastifyReply): Promise<void> };
  }
}

export const oauthModule = defineModule({
  name: 'oauth',
  required: false,
  description: 'Authorization server: OAuth 2.1 and OpenID Connect provider',
  forms: ['FULL'],
  // The authorization server (built on first use, rebuilt when the keys change), made ready now and
  // whenever the module is switched on (a subscription, not a timer).
  start: (ctx) => {
    const server = createAuthorizationServer(ctx);
    watchAuthorizationServer(ctx, server);
    return server;
  },
  offer: (ctx, server) => ({
    pass: (request, reply) => passToAuthorizationServer(ctx, server, request, reply),
  }),
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
