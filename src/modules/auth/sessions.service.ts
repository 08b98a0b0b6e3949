import type { Kysely, Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../context.ts';
import type { DB, UserRow } from '../../db/schema.ts';
import { hashOpaqueToken, newOpaqueToken } from '../../security/opaque-tokens.ts';
import { type PublicUser, toPublicUser } from '../users/users.schemas.ts';
import { insertRefreshToken } from './auth.queries.ts';
import { insertSession } from './sessions.queries.ts';

/** The token response of docs/api.md §5. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  refresh_expires_in: number;
  user: PublicUser;
}

/** Where a session was opened from (shown in the profile's session list, kept for audit). */
export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

/**
 * Opens a new session for a user and returns its first token pair. Pass a transaction to make the
 * session part of a larger change (invitation acceptance, identity provisioning).
 */
export async function openSession(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  db: Kysely<DB> | Transaction<DB> = ctx.db,
): Promise<TokenResponse> {
  return (await startSession(ctx, user, client, db)).tokens;
}

/** openSession that also names the new session (for the audit entry written in the same transaction). */
export async function startSession(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  db: Kysely<DB> | Transaction<DB> = ctx.db,
): Promise<{ sessionId: string; tokens: TokenResponse }> {
  const now = Date.now();
  const sessionId = uuidv7();
  const refreshToken = newOpaqueToken();
  // The first refresh token lives REFRESH_TOKEN_TTL_S, or less when SESSION_MAX_LIFETIME_S is shorter.
  const refreshTtlS = Math.min(ctx.config.refreshTokenTtlS, ctx.config.sessionMaxLifetimeS);
  const refreshTtlMs = refreshTtlS * 1000;
  await insertSession(db, {
    id: sessionId,
    user_id: user.id,
    created_at: now,
    last_used_at: now,
    expires_at: now + refreshTtlMs,
    revoked_at: null,
    revoked_reason: null,
    user_agent: client.userAgent?.slice(0, 512) ?? null,
    ip: client.ip,
  });
  await insertRefreshToken(db, {
    id: uuidv7(),
    sessionId,
    tokenHash: hashOpaqueToken(refreshToken),
    createdAt: now,
    expiresAt: now + refreshTtlMs,
  });
  const { token } = await ctx.accessTokens.sign({ userId: user.id, sessionId, role: user.role });
  return {
    sessionId,
    tokens: {
      access_token: token,
      token_type: 'Bearer',
      expires_in: ctx.config.accessTokenTtlS,
      refresh_token: refreshToken,
      refresh_expires_in: refreshTtlS,
      user: toPublicUser(user),
    },
  };
}

/** Revokes sessions of a user (all, or all but one); returns how many were revoked. */
export async function revokeUserSessions(
  db: Kysely<DB> | Transaction<DB>,
  userId: string,
  reason: string,
  exceptSessionId?: string,
): Promise<number> {
  let query = db
    .updateTable('sessions')
    .set({ revoked_at: Date.now(), revoked_reason: reason })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);
  if (exceptSessionId) query = query.where('id', '!=', exceptSessionId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Revokes one session. */
export async function revokeSession(
  db: Kysely<DB> | Transaction<DB>,
  sessionId: string,
  reason: string,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ revoked_at: Date.now(), revoked_reason: reason })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** The client address and user agent of a request (the address honours TRUST_PROXY via Fastify). */
export function clientInfo(request: {
  ip: string;
  headers: Record<string, string | string[] | undefined>;
}): ClientInfo {
  const ua = request.headers['user-agent'];
  return { ip: request.ip ?? null, userAgent: typeof ua === 'string' ? ua : null };
}
