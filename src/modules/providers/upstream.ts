import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { VerifiedIdentity } from '../idp/index.ts';
import { createOidcClient, type OidcClient, providerUnavailable, verifyIdToken } from '../idp/index.ts';
import { appleClientSecret, GITHUB_API } from './presets.ts';
import type { Provider } from './providers.service.ts';

/*
 * The client side of a provider's redirect flow, by openid-client 6 (and jose for Apple's secret): the
 * authorization URL, the code exchange, and from its answer a verified identity — for `oidc` providers
 * the ID token checked as docs/api.md §7 says (src/modules/idp/id-token.ts, the same code as
 * POST /idp/verify), for `github` the user and e-mail API.
 */

interface Cached {
  version: number;
  server: Promise<oidc.ServerMetadata>;
  verifier: OidcClient | null;
}
const caches = new WeakMap<AppContext, Map<string, Cached>>();

const isHttp = (url: string) => url.startsWith('http:');

function cached(ctx: AppContext, provider: Provider): Cached {
  let map = caches.get(ctx);
  if (!map) {
    map = new Map();
    caches.set(ctx, map);
  }
  const hit = map.get(provider.name);
  if (hit && hit.version === provider.version) return hit;
  const entry: Cached = {
    version: provider.version,
    server: serverMetadata(ctx, provider),
    verifier:
      provider.kind === 'oidc'
        ? createOidcClient(
            { ...ctx.config.oidc, issuer: provider.issuer, clientId: provider.clientId },
            ctx.log,
          )
        : null,
  };
  // A failed discovery is not kept: the next sign-in tries again.
  entry.server.catch(() => {
    if (map.get(provider.name) === entry) map.delete(provider.name);
  });
  map.set(provider.name, entry);
  return entry;
}

async function serverMetadata(ctx: AppContext, provider: Provider): Promise<oidc.ServerMetadata> {
  if (provider.kind === 'github') {
    return {
      issuer: provider.issuer,
      authorization_endpoint: `${provider.issuer}/login/oauth/authorize`,
      token_endpoint: `${provider.issuer}/login/oauth/access_token`,
    };
  }
  try {
    const config = await oidc.discovery(new URL(provider.issuer), provider.clientId, undefined, oidc.None(), {
      timeout: Math.ceil(ctx.config.oidc.httpTimeoutMs / 1000),
      ...(isHttp(provider.issuer) && { execute: [oidc.allowInsecureRequests] }),
    });
    return config.serverMetadata();
  } catch (err) {
    throw providerUnavailable(`discovery of provider ${provider.name} failed`, err);
  }
}

/** openid-client's configuration for one exchange (Apple's client secret is minted fresh each time). */
async function configuration(ctx: AppContext, provider: Provider): Promise<oidc.Configuration> {
  const server = await cached(ctx, provider).server;
  let secret = provider.clientSecret;
  if (provider.preset === 'apple' && provider.privateKey !== null) {
    const { team_id, key_id } = provider.settings;
    secret = await appleClientSecret(
      { teamId: team_id ?? '', keyId: key_id ?? '', clientId: provider.clientId },
      provider.privateKey,
    );
  }
  const auth = secret === null ? oidc.None() : oidc.ClientSecretPost(secret);
  const config = new oidc.Configuration(server, provider.clientId, undefined, auth);
  if (isHttp(provider.issuer)) oidc.allowInsecureRequests(config);
  config.timeout = Math.ceil(ctx.config.oidc.httpTimeoutMs / 1000);
  return config;
}

/** What the start of a flow sends the provider. */
export interface AuthorizationParams {
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Linking asks the provider to authenticate afresh (docs/api.md §18). */
  fresh: boolean;
}

/** Whether the provider answers with a POST (`form_post`): Apple. */
export function usesFormPost(provider: Provider): boolean {
  return provider.preset === 'apple';
}

/** The provider's authorization URL with state, nonce and PKCE S256. */
export async function authorizationUrl(
  ctx: AppContext,
  provider: Provider,
  p: AuthorizationParams,
): Promise<string> {
  const config = await configuration(ctx, provider);
  const params: Record<string, string> = {
    redirect_uri: p.redirectUri,
    response_type: 'code',
    scope: provider.scopes.join(' '),
    state: p.state,
    code_challenge: await oidc.calculatePKCECodeChallenge(p.codeVerifier),
    code_challenge_method: 'S256',
  };
  if (provider.kind === 'oidc') params.nonce = p.nonce;
  if (usesFormPost(provider)) params.response_mode = 'form_post';
  if (p.fresh && provider.kind === 'oidc') params.max_age = '0';
  return oidc.buildAuthorizationUrl(config, params).href;
}

/** The callback's checks: the stored state, nonce and PKCE verifier of this browser's flow. */
export interface CallbackChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** An identity the provider vouched for, plus what allowed_domains looks at. */
export interface UpstreamIdentity {
  identity: VerifiedIdentity;
  /** Google's `hd` or Microsoft's `tid`, when the provider has one. */
  organization: string | null;
  /** The raw ID token (oidc), reserved as used in the sign-in's transaction (docs/api.md §16). */
  idToken: string | null;
}

/** Exchanges the code and returns the verified identity; failures are ApiErrors of docs/api.md §9. */
export async function exchange(
  ctx: AppContext,
  provider: Provider,
  callback: URL | Request,
  checks: CallbackChecks,
): Promise<UpstreamIdentity> {
  const config = await configuration(ctx, provider);
  let tokens: oidc.TokenEndpointResponse;
  try {
    tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.state,
      ...(provider.kind === 'oidc' ? { expectedNonce: checks.nonce, idTokenExpected: true } : {}),
    });
  } catch (err) {
    throw exchangeError(err);
  }
  if (provider.kind === 'github') return githubIdentity(ctx, provider, config, tokens.access_token);
  const idToken = tokens.id_token;
  if (typeof idToken !== 'string')
    throw new ApiError('idp_token_invalid', { detail: 'The provider sent no ID token' });
  const identity = await verifyIdToken(verifierFor(ctx, provider), idToken, checks.nonce);
  return refineIdentity(provider, identity, idToken);
}

/** The OpenID verifier (discovery and keys, cached) of an `oidc` provider, as POST /idp/verify uses it too. */
export function verifierFor(ctx: AppContext, provider: Provider): OidcClient {
  const verifier = cached(ctx, provider).verifier;
  if (verifier === null)
    throw new ApiError('validation_failed', { detail: `${provider.name} issues no ID tokens` });
  return verifier;
}

/** A provider's own reading of its verified ID token's claims. */
export function refineIdentity(
  provider: Provider,
  identity: VerifiedIdentity,
  idToken: string,
): UpstreamIdentity {
  const claims = decodeJwt(idToken);
  if (provider.preset === 'microsoft') {
    // Microsoft's `email` is whatever the tenant holds; only `xms_edov` says its domain owner vouched for it.
    identity.emailVerified = claims.xms_edov === true || claims.xms_edov === 1 || claims.xms_edov === '1';
  } else if (provider.preset === 'apple') {
    identity.emailVerified = claims.email_verified === true || claims.email_verified === 'true';
  }
  const org =
    provider.preset === 'google' ? claims.hd : provider.preset === 'microsoft' ? claims.tid : undefined;
  return { identity, organization: typeof org === 'string' ? org : null, idToken };
}

function exchangeError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  if (err instanceof oidc.AuthorizationResponseError) {
    return new ApiError('forbidden', { detail: 'The sign-in was cancelled or refused at the provider' });
  }
  if (err instanceof oidc.ResponseBodyError) {
    return new ApiError('idp_token_invalid', { detail: 'The provider refused the authorization code' });
  }
  if (err instanceof oidc.ClientError) {
    return new ApiError('idp_token_invalid', { detail: 'The provider answer failed a check', cause: err });
  }
  return providerUnavailable('the code exchange failed', err);
}

interface GithubEmail {
  email?: unknown;
  primary?: unknown;
  verified?: unknown;
}

/**
 * GitHub (OAuth 2, no ID token): the identity is (issuer, the numeric user id) — never the login,
 * which its owner can change — and only the verified primary address counts (docs/api.md §18).
 */
async function githubIdentity(
  ctx: AppContext,
  provider: Provider,
  config: oidc.Configuration,
  accessToken: string,
): Promise<UpstreamIdentity> {
  const api = (provider.settings.api_url ?? GITHUB_API).replace(/\/+$/, '');
  const get = async (path: string): Promise<unknown> => {
    const headers = new Headers({
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'Gatehouse',
    });
    let res: Response;
    try {
      res = await oidc.fetchProtectedResource(
        config,
        accessToken,
        new URL(`${api}${path}`),
        'GET',
        null,
        headers,
      );
    } catch (err) {
      throw providerUnavailable(`GitHub ${path} failed`, err);
    }
    if (res.status !== 200) throw providerUnavailable(`GitHub ${path} answered HTTP ${res.status}`);
    return res.json();
  };
  const user = (await get('/user')) as { id?: unknown; login?: unknown; name?: unknown };
  if (typeof user.id !== 'number' || !Number.isSafeInteger(user.id) || user.id <= 0) {
    throw new ApiError('idp_token_invalid', { detail: 'GitHub sent no numeric user id' });
  }
  const emails = await get('/user/emails');
  const primary = Array.isArray(emails)
    ? (emails as GithubEmail[]).find(
        (e) => e.primary === true && e.verified === true && typeof e.email === 'string',
      )
    : undefined;
  const name = typeof user.name === 'string' && user.name.trim() !== '' ? user.name.trim() : null;
  void ctx;
  return {
    identity: {
      issuer: provider.issuer,
      subject: String(user.id),
      email: primary ? (primary.email as string) : null,
      emailVerified: primary !== undefined,
      name: name ?? (typeof user.login === 'string' ? user.login : null),
      expiresAt: Date.now(),
    },
    organization: null,
    idToken: null,
  };
}
