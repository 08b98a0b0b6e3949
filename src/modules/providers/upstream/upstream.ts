import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { githubIdentity } from './github.ts';
import { type UpstreamIdentity, type VerifiedIdentity, verifyIdToken } from './id-token.ts';
import { createOidcClient, type OidcClient, providerUnavailable } from './oidc-client.ts';
import { appleClientSecret } from './presets.ts';
import type { Provider } from './providers.service.ts';
import { lacksMappedClaims, withUserinfo } from './userinfo.ts';

export type { UpstreamIdentity } from './id-token.ts';

/*
 * The client side of a provider's redirect flow, by openid-client 6 (and jose for Apple's secret): the
 * authorization URL, the code exchange, and from its answer a verified identity — for `oidc` providers
 * the ID token checked as docs/api.md §7 says (src/modules/idp/id-token.ts, the same code as
 * POST /idp/verify), for `github` the user and e-mail API.
 */

interface Cached {
  version: number;
  /** Fetched at the first flow or userinfo read (POST /idp/verify needs only the verifier). */
  server: Promise<oidc.ServerMetadata> | null;
  verifier: OidcClient | null;
}
/**
 * The openid-client state of one app's providers (discovery, keys), by provider name: made once by a
 * module's `start` (createUpstreams) and handed down to whatever reaches a provider.
 */
export interface Upstreams {
  readonly byName: Map<string, Cached>;
}

/** An app's empty provider state; the `providers` and `idp` modules each make theirs in `start`. */
export function createUpstreams(): Upstreams {
  return { byName: new Map() };
}

const isHttp = (url: string) => url.startsWith('http:');

function cached(ctx: AppContext, upstreams: Upstreams, provider: Provider): Cached {
  const map = upstreams.byName;
  const hit = map.get(provider.name);
  if (hit && hit.version === provider.version) return hit;
  const entry: Cached = {
    version: provider.version,
    server: null,
    verifier:
      provider.kind === 'oidc'
        ? createOidcClient(
            { ...ctx.config.oidc, issuer: provider.issuer, clientId: provider.clientId },
            ctx.log,
          )
        : null,
  };
  map.set(provider.name, entry);
  return entry;
}

function server(ctx: AppContext, upstreams: Upstreams, provider: Provider): Promise<oidc.ServerMetadata> {
  const entry = cached(ctx, upstreams, provider);
  if (entry.server === null) {
    const fetched = serverMetadata(ctx, provider);
    entry.server = fetched;
    // A failed discovery is not kept: the next sign-in tries again.
    fetched.catch(() => {
      if (entry.server === fetched) entry.server = null;
    });
  }
  return entry.server;
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
async function configuration(
  ctx: AppContext,
  upstreams: Upstreams,
  provider: Provider,
): Promise<oidc.Configuration> {
  const metadata = await server(ctx, upstreams, provider);
  let secret = provider.clientSecret;
  if (provider.preset === 'apple' && provider.privateKey !== null) {
    const { team_id, key_id } = provider.settings;
    secret = await appleClientSecret(
      { teamId: team_id ?? '', keyId: key_id ?? '', clientId: provider.clientId },
      provider.privateKey,
    );
  }
  const auth = secret === null ? oidc.None() : oidc.ClientSecretPost(secret);
  const config = new oidc.Configuration(metadata, provider.clientId, undefined, auth);
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
  upstreams: Upstreams,
  provider: Provider,
  p: AuthorizationParams,
): Promise<string> {
  const config = await configuration(ctx, upstreams, provider);
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

/** Exchanges the code and returns the verified identity; failures are ApiErrors of docs/api.md §9. */
export async function exchange(
  ctx: AppContext,
  upstreams: Upstreams,
  provider: Provider,
  callback: URL | Request,
  checks: CallbackChecks,
): Promise<UpstreamIdentity> {
  const config = await configuration(ctx, upstreams, provider);
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
  const verified = await verifyIdToken(verifierFor(ctx, upstreams, provider), idToken, checks.nonce);
  // The redirect flow always holds an access token: userinfo fills in what the ID token lacks.
  const identity = await withUserinfo(config, verified, tokens.access_token);
  return refineIdentity(provider, identity, idToken);
}

/** `POST /idp/verify` with an access token: the provider's userinfo fills in what the ID token lacks. */
export async function completeClaims(
  ctx: AppContext,
  upstreams: Upstreams,
  provider: Provider,
  identity: VerifiedIdentity,
  accessToken: string,
): Promise<VerifiedIdentity> {
  if (provider.kind !== 'oidc' || !lacksMappedClaims(identity)) return identity;
  return withUserinfo(await configuration(ctx, upstreams, provider), identity, accessToken);
}

/** The OpenID verifier (discovery and keys, cached) of an `oidc` provider, as POST /idp/verify uses it too. */
export function verifierFor(ctx: AppContext, upstreams: Upstreams, provider: Provider): OidcClient {
  const verifier = cached(ctx, upstreams, provider).verifier;
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

/**
 * `allowed_domains` (docs/api.md §18): Google's `hd` or Microsoft's `tid` where the provider has one,
 * else the verified address's exact domain. An empty list admits everyone.
 */
export function assertAllowedDomain(provider: Provider, upstream: UpstreamIdentity): void {
  if (provider.allowedDomains.length === 0) return;
  const allowed = new Set(provider.allowedDomains.map((d) => d.toLowerCase()));
  let value: string | null = null;
  if (provider.preset === 'google' || provider.preset === 'microsoft') {
    value = upstream.organization?.toLowerCase() ?? null;
  } else if (upstream.identity.email !== null && upstream.identity.emailVerified) {
    const email = upstream.identity.email;
    value = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  }
  if (value === null || !allowed.has(value)) {
    throw new ApiError('forbidden', { detail: `This ${provider.displayName} account is not admitted here` });
  }
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
