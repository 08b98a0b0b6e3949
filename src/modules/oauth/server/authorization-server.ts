import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { addSigningKey } from '../../../identity/tokens/signing-keys.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import {
  clientPolicy,
  newClientId,
  OIDC_SCOPES,
  providerClientMetadata,
  RESPONSE_MODES,
} from '../clients/clients.service.ts';
import { registrationReadScopes, storeRegisteredClient } from '../clients/registration.ts';
import { registrationPolicies } from '../clients/registration-policies.ts';
import { resourceIndicators, rotateAfterTargetCheck } from '../resources/resource-indicators.ts';
import { findAccount } from './accounts.ts';
import { adapterFactory } from './adapter.ts';
import { extraTokenClaims, rotateAfterClaimsHook } from './claims-hook.ts';
import { clientBasedCors } from './client-cors.ts';
import { endsGatehouseSessionOnLogout, expiresWithSession, sessionLiveness } from './grant-sessions.ts';
import { loadExistingGrant } from './grants.ts';
import { rotateAfterIdTokenHook } from './id-token-claims.ts';
import { findAccountRow, insertAppSecret, readAppSecret } from './models.queries.ts';
import { keepsGrantOrganization, organizationParam } from './organization-tokens.ts';
import { formPostPages, logoutSource, postLogoutSuccessSource, renderError } from './pages.ts';
import { pkceConfiguration } from './pkce-policy.ts';
import { interactionPolicyFor } from './policy.ts';
import { guardRegisteredClients } from './registered-clients.ts';
import { introspectionOfJwtInactive, revocationAnswersJson, userSignInClaims } from './token-answers.ts';

/** Where the library's endpoints live (docs/api.md §17). */
export const OAUTH_ROUTES = {
  authorization: '/oauth2/authorize',
  token: '/oauth2/token',
  userinfo: '/oauth2/userinfo',
  introspection: '/oauth2/introspect',
  revocation: '/oauth2/revoke',
  end_session: '/oauth2/logout',
  registration: '/oauth2/register',
  // Served by Gatehouse itself from its signing keys (src/modules/auth/auth.routes.ts), never by the
  // library: the discovery documents point at it.
  jwks: '/.well-known/jwks.json',
} as const;

/** Where a person signs in and consents: Gatehouse's hosted page for one interaction. */
export const INTERACTION_PATH = '/account/authorize';

export interface Built {
  signature: string;
  provider: Provider;
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

/**
 * The authorization server of one app: the `oauth` module's state (its `start`), handed to whatever
 * serves or drives the library. `get()` builds it on first use and rebuilds it whenever the signing
 * keys change (a rotation here or on another instance, an algorithm change): its keys are
 * Gatehouse's keys, so the one JWKS at /.well-known/jwks.json verifies everything it signs.
 */
export interface AuthorizationServer {
  get(): Promise<Built>;
}

/** Makes an app's authorization server; nothing is built until the first `get()`. */
export function createAuthorizationServer(ctx: AppContext): AuthorizationServer {
  let built: Promise<Built> | null = null;
  return {
    async get() {
      const current = built;
      if (current) {
        const server = await current;
        // The keys as they are once the build awaited is done: that build may itself have added the
        // RS256 key, and a request arriving meanwhile must not rebuild for it.
        if (server.signature === keySignature(ctx) && ctx.keys.hasCurrentKey('RS256')) return server;
      }
      const next = build(ctx);
      built = next;
      try {
        return await next;
      } catch (err) {
        if (built === next) built = null;
        throw err;
      }
    },
  };
}

/**
 * OpenID Discovery requires RS256 for ID tokens: while `oauth` is on an unretired RS256 key is
 * always loaded (added beside the instance's own algorithm when that is ES256 or EdDSA).
 */
export async function ensureRs256Key(ctx: AppContext): Promise<void> {
  if (ctx.keys.hasCurrentKey('RS256')) return;
  await ctx.keys.reload();
  if (ctx.keys.hasCurrentKey('RS256')) return;
  // Instances starting together must not each add one (their JWKS would differ until the next
  // reload): the key is added under a claim named after the newest RS256 key they all see, in one
  // transaction, so exactly one instance adds it and the others wait for it, then load it.
  const newest = ctx.keys.privateJwks().find((k) => k.alg === 'RS256')?.kid ?? 'none';
  await ctx.db.transaction().execute(async (trx) => {
    if (await insertAppSecret(trx, `oauth_rs256_after:${newest}`, 'claimed', Date.now())) {
      await addSigningKey(trx, 'RS256');
    }
  });
  await ctx.keys.reload();
  // A claim left from a key no longer loaded (retired long ago): add one without it.
  if (!ctx.keys.hasCurrentKey('RS256')) {
    await addSigningKey(ctx.db, 'RS256');
    await ctx.keys.reload();
  }
}

function keySignature(ctx: AppContext): string {
  return ctx.keys
    .jwks()
    .keys.map((k) => k.kid)
    .join(',');
}

async function cookieKey(ctx: AppContext): Promise<string> {
  const name = 'oauth_cookie_key';
  const existing = await readAppSecret(ctx.db, name);
  if (existing !== undefined) return existing;
  await insertAppSecret(ctx.db, name, randomBytes(32).toString('base64url'), Date.now());
  return (await readAppSecret(ctx.db, name)) as string;
}

async function build(ctx: AppContext): Promise<Built> {
  await ensureRs256Key(ctx);
  const signature = keySignature(ctx);
  const provider = new Provider(ctx.config.publicUrl, configuration(ctx, await cookieKey(ctx)));
  // The library reads the origin from X-Forwarded-Host and X-Forwarded-Proto, which mount.ts sets to
  // PUBLIC_URL's on every request it hands over (whatever the client sent): its URLs and its
  // cookies' Secure flag follow PUBLIC_URL.
  provider.proxy = true;
  provider.on('server_error', (_kctx: unknown, err: unknown) => {
    ctx.log.error({ err }, 'authorization server error');
  });
  // Post-middlewares (grant-sessions.ts, registration.ts): RP-initiated logout ends the Gatehouse
  // session; the RFC 7592 read shows the scopes Gatehouse stores.
  provider.use(endsGatehouseSessionOnLogout(ctx));
  provider.use(registrationReadScopes(ctx));
  // Revocation answers JSON; introspecting a resource JWT answers inactive (token-answers.ts).
  provider.use(revocationAnswersJson());
  provider.use(introspectionOfJwtInactive());
  // An authorization's (or a switching refresh's) organization is kept beside its grant.
  provider.use(keepsGrantOrganization(ctx));
  // The library's discovery lists every mode it registers; Gatehouse serves `query` and `form_post`
  // only (clients.service.ts), so that is what it advertises (a documented post-middleware).
  provider.use(formPostPages(ctx.config));
  // Clients anyone may register redirect nowhere without a click (registered-clients.ts).
  guardRegisteredClients(ctx, provider);
  provider.use(async (kctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    if (kctx.oidc?.route === 'discovery' && kctx.body && typeof kctx.body === 'object') {
      kctx.body.response_modes_supported = [...RESPONSE_MODES];
    }
  });
  return { signature, provider, handle: provider.callback() };
}

function configuration(ctx: AppContext, cookieSecret: string): Configuration {
  const { config } = ctx;
  const registration = config.oauth.dynamicRegistration;
  const algs = ['RS256', 'ES256', 'EdDSA'];
  return {
    adapter: adapterFactory(
      ctx.db,
      {
        find: (id) => providerClientMetadata(ctx, id),
        register: (id, metadata) => storeRegisteredClient(ctx, id, metadata),
      },
      sessionLiveness(ctx),
    ),
    clients: [],
    jwks: { keys: ctx.keys.privateJwks() },
    cookies: {
      keys: [cookieSecret],
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    // `amr` (OIDC Core 2): the methods of the Gatehouse sign-in; the library drops it unless a scope lists it.
    // `org_id` and `organizations` (docs/api.md §21): the grant's organization, the user's memberships.
    // The names the claims hook may add to ID tokens are the openid scope's too (id-token-claims.ts).
    claims: {
      openid: ['sub', 'amr', 'org_id', ...(config.tokenHook?.idTokenClaims ?? [])],
      email: ['email', 'email_verified'],
      profile: ['name', 'updated_at'],
      organizations: ['organizations'],
    },
    scopes: [...OIDC_SCOPES],
    // docs/api.md §17: granted email and profile claims are in the ID token too.
    conformIdTokenClaims: false,
    findAccount: findAccount(ctx),
    // OIDC Core 3.1.2.1: `redirect_uri` is required, even for a client with one registered URI
    // (the library's default fills it in); a request without it gets an error page, never a code.
    allowOmittingSingleRegisteredRedirectUri: false,
    responseTypes: ['code'],
    // A resource's JWT of a user grant carries auth_time and amr (token-answers.ts).
    formats: { customizers: { jwt: userSignInClaims } },
    // Cross-origin calls of browser apps, from their redirect URIs' origins (client-cors.ts).
    clientBasedCORS: clientBasedCors,
    // S256 for every client but a confidential one an admin exempted, which sends a nonce instead.
    ...pkceConfiguration,
    // `organization=<id>` on the authorization request (organization-tokens.ts), beside the nonce rule.
    extraParams: { ...pkceConfiguration.extraParams, organization: organizationParam(ctx) },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    clientDefaults: {
      grant_types: ['authorization_code'],
      id_token_signed_response_alg: 'RS256',
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    enabledJWA: {
      idTokenSigningAlgValues: algs,
      clientAuthSigningAlgValues: algs,
      requestObjectSigningAlgValues: algs,
      userinfoSigningAlgValues: algs,
      introspectionSigningAlgValues: algs,
      authorizationSigningAlgValues: algs,
    },
    routes: { ...OAUTH_ROUTES },
    interactions: {
      policy: interactionPolicyFor(ctx),
      url: (_kctx: unknown, interaction: { uid: string }) => `${INTERACTION_PATH}/${interaction.uid}`,
    },
    renderError: renderError(config),
    ttl: {
      AccessToken: (_kctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) =>
        token.resourceServer?.accessTokenTTL ?? config.accessTokenTtlS,
      ClientCredentials: (_kctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) =>
        token.resourceServer?.accessTokenTTL ?? config.accessTokenTtlS,
      AuthorizationCode: 60,
      IdToken: config.accessTokenTtlS,
      RefreshToken: config.refreshTokenTtlS,
      // A grant is a Gatehouse session (docs/api.md §17): it lives as long as one can.
      Grant: Math.min(config.refreshTokenTtlS, config.sessionMaxLifetimeS),
      Session: config.sessionMaxLifetimeS,
      Interaction: 600,
    },
    loadExistingGrant: loadExistingGrant(ctx),
    expiresWithSession: expiresWithSession(ctx),
    // Every use of a refresh token rotates it, with no grace window; presenting a rotated one
    // revokes the grant (the library's reuse detection). A refresh whose `resource` is refused
    // is refused before the token is used (resource-indicators.ts).
    // The claims hook is asked then too, for the access and the ID token, before the token is
    // used (claims-hook.ts, id-token-claims.ts).
    rotateRefreshToken: rotateAfterIdTokenHook(ctx, rotateAfterClaimsHook(ctx, rotateAfterTargetCheck(ctx))),
    // A user's access tokens carry the claims hook's claims (docs/claims-hook.md).
    extraTokenClaims: extraTokenClaims(ctx),
    issueRefreshToken: async (
      _kctx: unknown,
      client: { clientId: string; grantTypeAllowed(t: string): boolean },
      code: { scopes: Set<string> },
    ) => {
      if (!client.grantTypeAllowed('refresh_token')) return false;
      if (code.scopes.has('offline_access')) return true;
      return (await clientPolicy(ctx, client.clientId))?.first_party === true;
    },
    features: {
      devInteractions: { enabled: false },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      clientCredentials: { enabled: true },
      userinfo: { enabled: true },
      revocation: {
        enabled: true,
        // Only the token's own client revokes it (RFC 7009 §2.1); any other gets the library's refusal.
        allowedPolicy: async (_kctx: unknown, caller: { clientId: string }, token: { clientId: string }) =>
          caller.clientId === token.clientId,
      },
      introspection: {
        enabled: true,
        // The token's own client, or a client an admin marked `introspection: true`.
        // A token of an account that is disabled or deleted introspects as inactive at once (the
        // refresh token and userinfo fail too: findAccount answers no account).
        allowedPolicy: async (
          _kctx: unknown,
          caller: { clientId: string },
          token: { clientId: string; accountId?: string },
        ) => {
          if (
            caller.clientId !== token.clientId &&
            (await clientPolicy(ctx, caller.clientId))?.introspection !== true
          ) {
            return false;
          }
          if (token.accountId === undefined) return true;
          return (await findAccountRow(ctx.db, token.accountId))?.status === 'active';
        },
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: logoutSource(config),
        postLogoutSuccessSource: postLogoutSuccessSource(config),
      },
      registration: {
        enabled: registration !== 'off',
        // `token`: an initial access token an admin made (stored hashed, like every model).
        initialAccessToken: registration === 'token',
        idFactory: newClientId,
        // Each token registers one client (registration-policies.ts).
        policies: registration === 'token' ? registrationPolicies(ctx) : undefined,
      },
      resourceIndicators: resourceIndicators(ctx),
    },
  };
}
