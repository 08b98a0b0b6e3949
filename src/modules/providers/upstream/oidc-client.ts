import { createRemoteJWKSet, type JWTVerifyGetKey, errors as joseErrors } from 'jose';
import type { Logger } from 'pino';
import { ApiError } from '../../../platform/api-error.ts';
import type { Config } from '../../../platform/config.ts';
import type { HealthCheck } from '../../../platform/health-check.ts';

/** The part of the provider's discovery document Gatehouse uses (OpenID Connect Discovery 1.0 §3). */
export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  end_session_endpoint: string | null;
  jwks_uri: string;
  scopes_supported: string[];
}

/** OIDC settings with a provider configured. */
export type OidcSettings = Config['oidc'] & { readonly issuer: string; readonly clientId: string };

/** The provider as Gatehouse sees it: cached discovery, cached keys, a live probe for health. */
export interface OidcClient {
  readonly settings: OidcSettings;
  /** The discovery document, reused for OIDC_CACHE_TTL_S; throws 503 `idp_unavailable`. */
  discovery(): Promise<Discovery>;
  /** A key resolver for `jwtVerify` over the provider's JWKS; fetch failures become 503 `idp_unavailable`. */
  keyResolver(doc: Discovery): JWTVerifyGetKey;
  /** Fetches discovery and keys now (refreshing both caches); `ok` with the key count, else `error`. */
  probe(): Promise<HealthCheck>;
}

const MAX_DOCUMENT_CHARS = 512 * 1024;

/** The 503 every provider failure becomes; the internal reason rides along as `cause` for the log only. */
export function providerUnavailable(reason: string, cause?: unknown): ApiError {
  return new ApiError('idp_unavailable', {
    detail: 'The identity provider cannot be reached right now; try again shortly',
    retryAfterS: 5,
    cause: new Error(reason, { cause }),
  });
}

/**
 * The idp module's state (its `start`): the seed's provider, `OIDC_ISSUER` with `OIDC_CLIENT_ID`,
 * or null when none is configured (docs/api.md §7).
 */
export interface IdpState {
  readonly seed: OidcClient | null;
}

export function startIdp(config: Config, log: Logger): IdpState {
  const { issuer, clientId } = config.oidc;
  return {
    seed:
      issuer !== null && clientId !== null
        ? createOidcClient({ ...config.oidc, issuer, clientId }, log)
        : null,
  };
}

/** Builds the client; nothing is fetched until first use, and failures are never cached. */
export function createOidcClient(settings: OidcSettings, log: Logger): OidcClient {
  const ttlMs = settings.cacheTtlS * 1000;
  let cached: { doc: Discovery; fetchedAt: number } | undefined;
  let inflight: Promise<Discovery> | undefined;
  let keys: { uri: string; set: ReturnType<typeof createRemoteJWKSet> } | undefined;
  let failing = false;

  const noteFailure = (err: unknown): void => {
    if (!failing)
      log.warn({ err: err instanceof ApiError ? err.cause : err }, 'identity provider unreachable');
    failing = true;
  };
  const noteSuccess = (): void => {
    if (failing) log.info('identity provider reachable again');
    failing = false;
  };

  // One fetch at a time however many requests wait for it; a failure is reported to all of them and
  // forgotten, so the next request tries again (recovery needs no restart).
  const refresh = (): Promise<Discovery> => {
    inflight ??= fetchDiscovery(settings)
      .then((doc) => {
        cached = { doc, fetchedAt: Date.now() };
        noteSuccess();
        return doc;
      })
      .catch((err: unknown) => {
        noteFailure(err);
        throw err;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };

  const keySetFor = (doc: Discovery) => {
    if (keys?.uri !== doc.jwks_uri) {
      keys = {
        uri: doc.jwks_uri,
        set: createRemoteJWKSet(new URL(doc.jwks_uri), {
          timeoutDuration: settings.httpTimeoutMs,
          cooldownDuration: settings.jwksCooldownS * 1000,
          cacheMaxAge: ttlMs,
        }),
      };
    }
    return keys.set;
  };

  return {
    settings,
    async discovery() {
      if (cached && Date.now() - cached.fetchedAt < ttlMs) return cached.doc;
      return refresh();
    },
    keyResolver(doc) {
      const set = keySetFor(doc);
      return async (header, token) => {
        try {
          return await set(header, token);
        } catch (err) {
          // No matching key is the token's fault; anything else (refused connection, timeout, a
          // non-200 answer, a malformed set) is the provider's.
          if (
            err instanceof joseErrors.JWKSNoMatchingKey ||
            err instanceof joseErrors.JWKSMultipleMatchingKeys
          ) {
            throw err;
          }
          noteFailure(err);
          throw providerUnavailable('the provider key set could not be fetched', err);
        }
      };
    },
    async probe() {
      const started = performance.now();
      try {
        const set = keySetFor(await refresh());
        await set.reload();
        const count = set.jwks()?.keys.length ?? 0;
        if (count === 0) return { status: 'error', keys: 0 };
        return {
          status: 'ok',
          keys: count,
          latency_ms: Math.round((performance.now() - started) * 100) / 100,
        };
      } catch (err) {
        if (!(err instanceof ApiError)) noteFailure(err);
        return { status: 'error' };
      }
    },
  };
}

/** `${issuer}/.well-known/openid-configuration` (a trailing slash of the issuer is dropped first, per Discovery §4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

async function fetchDiscovery(settings: OidcSettings): Promise<Discovery> {
  const url = discoveryUrl(settings.issuer);
  let text: string;
  try {
    const res = await fetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(settings.httpTimeoutMs),
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw providerUnavailable(`discovery answered HTTP ${res.status}`);
    }
    text = await res.text();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw providerUnavailable('discovery request failed', err);
  }
  if (text.length > MAX_DOCUMENT_CHARS) throw providerUnavailable('discovery document too large');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw providerUnavailable('discovery document is not JSON', err);
  }
  return parseDiscovery(raw, settings.issuer);
}

/** Validates a discovery document: the exact issuer (Discovery §4.3) and http(s) endpoint URLs. */
export function parseDiscovery(raw: unknown, expectedIssuer: string): Discovery {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw providerUnavailable('discovery document is not an object');
  }
  const doc = raw as Record<string, unknown>;
  // A document naming another issuer is refused: its keys would vouch for tokens of someone else.
  if (doc.issuer !== expectedIssuer) {
    throw providerUnavailable(`discovery issuer ${JSON.stringify(doc.issuer)} is not OIDC_ISSUER`);
  }
  const secure = expectedIssuer.startsWith('https:');
  const endpoint = (name: string, required: boolean): string | null => {
    const value = doc[name];
    if (value === undefined || value === null) {
      if (required) throw providerUnavailable(`discovery document lacks ${name}`);
      return null;
    }
    let parsed: URL;
    try {
      parsed = new URL(String(value));
    } catch {
      throw providerUnavailable(`discovery ${name} is not a URL`);
    }
    // An https issuer must not hand out plain-http endpoints (keys fetched over http could be swapped).
    const allowed = secure ? ['https:'] : ['https:', 'http:'];
    if (typeof value !== 'string' || !allowed.includes(parsed.protocol)) {
      throw providerUnavailable(`discovery ${name} has a refused scheme`);
    }
    return value;
  };
  const scopes = doc.scopes_supported;
  return {
    issuer: expectedIssuer,
    authorization_endpoint: endpoint('authorization_endpoint', true)!,
    token_endpoint: endpoint('token_endpoint', true)!,
    end_session_endpoint: endpoint('end_session_endpoint', false),
    jwks_uri: endpoint('jwks_uri', true)!,
    // RECOMMENDED only; every provider supports `openid`.
    scopes_supported:
      Array.isArray(scopes) && scopes.every((s) => typeof s === 'string') ? (scopes as string[]) : ['openid'],
  };
}
