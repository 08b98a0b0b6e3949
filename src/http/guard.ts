import type { FastifyReply, FastifyRequest } from 'fastify';
import { ENROLLMENT_AUDIENCE, enrollmentOnly, enrollmentRequired } from '../identity/require-mfa.ts';
import type { AccessClaims, AccessTokens } from '../identity/tokens/access-tokens.ts';
import type { SessionReader } from '../identity/tokens/session-cache.ts';
import { ApiError } from '../platform/api-error.ts';
import type { RequireMfa } from '../platform/config.ts';
import type { SessionRow, UserRow } from '../platform/db/schema.ts';
import type { Access } from './endpoint.ts';

/** Who is calling: set on the request by the guard for every non-public endpoint. */
export interface AuthContext {
  readonly token: string;
  readonly claims: AccessClaims;
  readonly user: UserRow;
  readonly session: SessionRow;
  /**
   * REQUIRE_MFA (src/identity/require-mfa.ts): the session was opened without the second factor this
   * account needs; only endpoints declared `enrollment: true` answer it.
   */
  readonly enrollmentOnly: boolean;
  /**
   * The API key the caller authenticated with (docs/api.md §22), or null for an access token. A key's
   * caller has no token claims and no session: reading `claims` or `session` of one answers 403
   * `forbidden` (a credential endpoint that forgot its `apiKeys: 'refused'` still refuses keys).
   */
  readonly apiKey: KeyCaller | null;
  /**
   * The OAuth client whose access token for Gatehouse's own API the caller presented (docs/api.md
   * §22: `api_keys.verify` only); absent otherwise. Such a caller has no user, claims or session:
   * reading any of them answers 403 `forbidden`.
   */
  readonly oauthClient?: ClientCaller;
}

/** What the guard knows of an OAuth client's caller: its id and the scopes its token holds. */
export interface ClientCaller {
  readonly id: string;
  readonly scopes: readonly string[];
}

/** What the guard knows of a key's caller. */
export interface KeyCaller {
  readonly id: string;
  /** null: everything the owner may do (`api_keys:verify` only for an admin owner). */
  readonly scopes: readonly string[] | null;
}

/**
 * Authenticates API keys (the `api_keys` module, wired by app.ts): `claims` tells a key from an
 * access token by its shape; `authenticate` answers the caller (counting the use on the key's rate
 * limit) or throws the 401/403/429 that says why not — also while the module is off.
 */
export interface KeyAuthenticator {
  claims(token: string): boolean;
  authenticate(token: string): Promise<AuthContext>;
}

/** What the guard checks of an endpoint for a key. */
export interface KeyRule {
  readonly scope: string;
  readonly refused: boolean;
}

/** The caller of a key, its owner acting: no claims, no session (see AuthContext.apiKey). */
export function keyCallerContext(token: string, user: UserRow, key: KeyCaller): AuthContext {
  const noSession = (): never => {
    throw new ApiError('forbidden', { detail: 'API keys cannot be used for this endpoint' });
  };
  return Object.defineProperties(
    { token, user, enrollmentOnly: false, apiKey: key } as unknown as AuthContext,
    { claims: { get: noSession }, session: { get: noSession } },
  );
}

/** The caller of an OAuth client's token: no user, no claims, no session (see AuthContext.oauthClient). */
export function clientCallerContext(token: string, client: ClientCaller): AuthContext {
  const none = (): never => {
    throw new ApiError('forbidden', { detail: "An OAuth client's token cannot be used for this endpoint" });
  };
  return Object.defineProperties(
    { token, enrollmentOnly: false, apiKey: null, oauthClient: client } as unknown as AuthContext,
    { claims: { get: none }, session: { get: none }, user: { get: none } },
  );
}

/** Whether a key's scopes grant `scope` (exact matching; null scopes: the owner's reach). */
export function keyGrants(key: KeyCaller, owner: UserRow, scope: string): boolean {
  if (key.scopes === null) return scope !== VERIFY_SCOPE || owner.role === 'admin';
  return key.scopes.includes(scope);
}

/** The scope of `api_keys.verify`, which `api_keys:write` does not grant (docs/api.md §22). */
export const VERIFY_SCOPE = 'api_keys:verify';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

const REALM = 'Bearer realm="gatehouse"';

/** Turns a bearer token into its caller, or throws the 401 that says why not. */
export type Authenticate = (token: string) => Promise<AuthContext>;

/**
 * The one way a bearer token is authenticated: the JWT is verified (src/identity/tokens/access-tokens.ts),
 * then its session and user are read (src/identity/tokens/session-cache.ts), so a logout, revocation,
 * disable, delete or role change acts on the very next request.
 */
export function createAuthenticator(
  tokens: AccessTokens,
  sessions: SessionReader,
  requireMfa: RequireMfa,
): Authenticate {
  return async (token) => {
    const claims = await tokens.verify(token);
    const found = await sessions.read(claims.sid);
    if (!found || found.user.id !== claims.sub || !sessionAlive(found.session)) {
      throw new ApiError('session_revoked', { detail: 'The session of this token has ended' });
    }
    const { session, user } = found;
    if (user.status !== 'active')
      throw new ApiError('session_revoked', { detail: 'The account is not active' });
    // The token must never vouch for a role the account no longer has (a demoted admin's token
    // would otherwise say `admin` until it expires): the client refreshes and gets the current role.
    if (claims.role !== user.role) {
      throw new ApiError('token_invalid', {
        detail: "The account's role has changed since this token was issued; refresh the token",
      });
    }
    // Decided again on every request from the account's role now, not only from the token's aud:
    // a pre-existing one-factor session, or an admin promoted since, is held to REQUIRE_MFA too.
    const enrollment =
      claims.aud === ENROLLMENT_AUDIENCE || enrollmentOnly(requireMfa, user.role, claims.amr);
    return { token, claims, user, session, enrollmentOnly: enrollment, apiKey: null };
  };
}

function sessionAlive(session: SessionRow): boolean {
  return session.revoked_at === null && session.expires_at > Date.now();
}

/** Reads `Authorization: Bearer …`; null when absent. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  const match = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(header);
  if (!match?.[1])
    throw withChallenge(
      new ApiError('token_invalid', { detail: 'The Authorization header is not a Bearer token' }),
    );
  return match[1];
}

/**
 * The onRequest hook enforcing an endpoint's access level (RFC 6750 challenges on 401). `enrollment`:
 * the endpoint also answers an enrolment-only session (REQUIRE_MFA); every other one refuses it
 * with 403 `mfa_enrollment_required`, before the admin check.
 */
export function guardFor(
  access: Access,
  authenticate: Authenticate,
  enrollment = false,
  keys: { authenticator: KeyAuthenticator; rule: KeyRule } | null = null,
  /** OAuth clients' tokens for Gatehouse's own API, on the endpoints that declare `oauthClients`. */
  clients: KeyAuthenticator | null = null,
) {
  return (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    let token: string | null;
    try {
      token = bearerToken(request);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (token === null) {
      done(
        new ApiError('unauthenticated', {
          detail: 'A Bearer access token is required',
          headers: { 'www-authenticate': REALM },
        }),
      );
      return;
    }
    if (clients?.claims(token) && keys !== null) {
      clients.authenticate(token).then(
        (auth) => {
          request.auth = auth;
          const granted = auth.oauthClient?.scopes.includes(keys.rule.scope) === true;
          done(
            access === 'admin'
              ? new ApiError('forbidden', { detail: 'This endpoint is for admins' })
              : scopeRefusal(keys.rule.scope, granted, 'token'),
          );
        },
        (err: unknown) =>
          done(err instanceof ApiError && err.status === 401 ? withChallenge(err) : (err as Error)),
      );
      return;
    }
    if (keys?.authenticator.claims(token)) {
      keys.authenticator.authenticate(token).then(
        (auth) => {
          request.auth = auth;
          done(keyRefusal(access, keys.rule, auth));
        },
        (err: unknown) =>
          done(err instanceof ApiError && err.status === 401 ? withChallenge(err) : (err as Error)),
      );
      return;
    }
    authenticate(token).then(
      (auth) => {
        request.auth = auth;
        if (auth.enrollmentOnly && !enrollment) done(enrollmentRequired());
        else
          done(
            access === 'admin' && auth.user.role !== 'admin'
              ? new ApiError('forbidden', { detail: 'This endpoint is for admins' })
              : undefined,
          );
      },
      (err: unknown) =>
        done(err instanceof ApiError && err.status === 401 ? withChallenge(err) : (err as Error)),
    );
  };
}

/** Why a key's caller may not call this endpoint, or undefined: refused, out of scope, not an admin. */
function keyRefusal(access: Access, rule: KeyRule, auth: AuthContext): ApiError | undefined {
  if (rule.refused) {
    return new ApiError('forbidden', { detail: 'API keys cannot change credentials; sign in instead' });
  }
  const refusal = scopeRefusal(rule.scope, keyGrants(auth.apiKey!, auth.user, rule.scope), 'key');
  if (refusal) return refusal;
  if (access === 'admin' && auth.user.role !== 'admin') {
    return new ApiError('forbidden', { detail: 'This endpoint is for admins' });
  }
  return undefined;
}

/** 403 `insufficient_scope` naming the scope (RFC 6750 §3.1), unless the credential holds it. */
function scopeRefusal(scope: string, granted: boolean, holder: 'key' | 'token'): ApiError | undefined {
  if (granted) return undefined;
  return new ApiError('insufficient_scope', {
    detail: `This ${holder} lacks the scope ${scope}`,
    headers: { 'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
  });
}

/**
 * For a public endpoint that also serves a signed-in caller (docs/api.md §16: passkey options for a
 * fresh proof): the caller when an Authorization header is sent, authenticated exactly as the guard
 * does (a bad token answers the guard's 401, never a silent fallback to the anonymous answer); null
 * when there is none.
 */
export async function optionalCaller(
  request: FastifyRequest,
  authenticate: Authenticate,
): Promise<AuthContext | null> {
  const token = bearerToken(request);
  if (token === null) return null;
  try {
    return await authenticate(token);
  } catch (err) {
    throw err instanceof ApiError && err.status === 401 ? withChallenge(err) : err;
  }
}

function withChallenge(err: ApiError): ApiError {
  const description = (err.detail ?? err.code).replace(/["\\]/g, '');
  err.headers['www-authenticate'] = `${REALM}, error="invalid_token", error_description="${description}"`;
  return err;
}

/** The authenticated caller; throws if the route was declared public by mistake. */
export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new ApiError('unauthenticated', { headers: { 'www-authenticate': REALM } });
  return request.auth;
}
