import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB, SessionRow, UserRow } from '../db/schema.ts';
import { ApiError } from '../errors.ts';
import { findSessionWithUser } from '../modules/auth/sessions.queries.ts';
import type { Access } from '../modules/endpoint.ts';
import type { AccessClaims, AccessTokens } from './access-tokens.ts';

/** Who is calling: set on the request by the guard for every non-public endpoint. */
export interface AuthContext {
  token: string;
  claims: AccessClaims;
  user: UserRow;
  session: SessionRow;
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
  if (session.revoked_at !== null || session.expires_at <= Date.now()) {
    throw new ApiError('session_revoked', { detail: 'The session of this token has ended' });
  }
  if (user.status !== 'active')
    throw new ApiError('session_revoked', { detail: 'The account is not active' });
  return { token, claims, user, session };
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
export function guardFor(access: Access, db: Kysely<DB>, tokens: AccessTokens) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const token = bearerToken(request);
    if (token === null) {
      throw new ApiError('unauthenticated', {
        detail: 'A Bearer access token is required',
        headers: { 'www-authenticate': REALM },
      });
    }
    try {
      request.auth = await authenticateToken(db, tokens, token);
    } catch (err) {
      throw err instanceof ApiError && err.status === 401 ? withChallenge(err) : err;
    }
    if (access === 'admin' && request.auth.user.role !== 'admin') {
      throw new ApiError('forbidden', { detail: 'This endpoint is for admins' });
    }
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
