import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { sqliteReader } from '../db/database.ts';
import type { DB, SessionRow, UserRow } from '../db/schema.ts';
import { ApiError } from '../errors.ts';
import { findSessionWithUser } from '../modules/auth/sessions.queries.ts';
import type { Access } from '../modules/endpoint.ts';
import type { AccessClaims, AccessTokens } from './access-tokens.ts';

/** Who is calling: set on the request by the guard for every non-public endpoint. */
export interface AuthContext {
  readonly token: string;
  readonly claims: AccessClaims;
  readonly user: UserRow;
  readonly session: SessionRow;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

const REALM = 'Bearer realm="gatehouse"';

/** Verifies a bearer token and that its session and user are still alive (logout/disable/delete act at once). */
export async function authenticateToken(
  db: Kysely<DB>,
  tokens: AccessTokens,
  token: string,
): Promise<AuthContext> {
  const claims = await tokens.verify(token);
  const found = await findSessionWithUser(db, claims.sid);
  if (!found || found.user.id !== claims.sub) {
    throw new ApiError('session_revoked', { detail: 'The session of this token has ended' });
  }
  const { session, user } = found;
  if (!sessionAlive(session)) {
    throw new ApiError('session_revoked', { detail: 'The session of this token has ended' });
  }
  if (user.status !== 'active')
    throw new ApiError('session_revoked', { detail: 'The account is not active' });
  return Object.freeze({ token, claims, user, session });
}

function sessionAlive(session: SessionRow): boolean {
  return session.revoked_at === null && session.expires_at > Date.now();
}

/** Authenticates bearer tokens, answering repeat callers from memory where that is exact (SQLite). */
export interface Authenticator {
  /** The caller, from memory, when nothing can have changed since it was authenticated; else undefined. */
  remembered(token: string): AuthContext | undefined;
  authenticate(token: string): Promise<AuthContext>;
}

interface Remembered {
  auth: AuthContext;
  writeMark: number;
}

const DEFAULT_REMEMBERED = 10_000;

/**
 * Token verification and the session and user rows are the cost of an authenticated request
 * (docs/benchmarks.md). On SQLite the service is the database's only writer,
 * and the connection counts every row it changes (SqliteReader.writeMark): an authenticated caller
 * is reused while that count has not moved, so a logout, disable, delete or role change — any write
 * at all — takes effect on the very next request. Token expiry and key unloading are checked on
 * every hit (AccessTokens.stillValid). On PostgreSQL other instances write too, so every request reads the rows.
 */
export function createAuthenticator(
  db: Kysely<DB>,
  tokens: AccessTokens,
  size = DEFAULT_REMEMBERED,
): Authenticator {
  const reader = sqliteReader(db);
  const known = new Map<string, Remembered>();
  let epoch = -1;

  // The write mark now, or null when it cannot vouch for rows (PostgreSQL, or a transaction holds
  // the connection and its uncommitted writes would be read).
  const mark = (): number | null => {
    if (reader === undefined || reader.inTransaction) return null;
    const writeMark = reader.writeMark();
    if (reader.epoch !== epoch) {
      known.clear();
      epoch = reader.epoch;
    }
    return writeMark;
  };

  return {
    remembered(token) {
      if (size === 0) return undefined;
      // The mark first: a new epoch empties the map.
      const writeMark = mark();
      const hit = writeMark === null ? undefined : known.get(token);
      if (hit === undefined || hit.writeMark !== writeMark || !sessionAlive(hit.auth.session))
        return undefined;
      return tokens.stillValid(hit.auth.claims) ? hit.auth : undefined;
    },
    async authenticate(token) {
      const before = size === 0 ? null : mark();
      const epochBefore = epoch;
      const auth = await authenticateToken(db, tokens, token);
      // Kept only when nothing was written while the rows were read (the reads may have waited),
      // by this connection or, as far as has been seen, by another.
      if (before !== null && mark() === before && epoch === epochBefore) {
        if (known.size >= size) known.delete(known.keys().next().value as string);
        known.set(token, { auth, writeMark: before });
      }
      return auth;
    },
  };
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

/** The onRequest hook enforcing an endpoint's access level (RFC 6750 challenges on 401). */
export function guardFor(access: Access, authenticator: Authenticator) {
  const admit = (request: FastifyRequest, auth: AuthContext): Error | undefined => {
    request.auth = auth;
    return access === 'admin' && auth.user.role !== 'admin'
      ? new ApiError('forbidden', { detail: 'This endpoint is for admins' })
      : undefined;
  };
  // A callback hook: a remembered caller is admitted without a promise or a database read.
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
    const remembered = authenticator.remembered(token);
    if (remembered !== undefined) {
      done(admit(request, remembered));
      return;
    }
    authenticator.authenticate(token).then(
      (auth) => done(admit(request, auth)),
      (err: unknown) =>
        done(err instanceof ApiError && err.status === 401 ? withChallenge(err) : (err as Error)),
    );
  };
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
