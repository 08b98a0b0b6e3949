import type { Kysely, Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../kernel/context.types.ts';
import type { DB, SessionRow, UserRow } from '../platform/db/schema.ts';
import { type AuditEvent, recordAudit } from './audit.queries.ts';
import { ENROLLMENT_AUDIENCE, ENROLLMENT_TTL_S, type EnrollmentGrant } from './require-mfa.ts';
import {
  findSessionWithUser,
  insertRefreshToken,
  insertSession,
  revokeSessionRows,
} from './sessions.queries.ts';
import { tokenRolesOf } from './token-roles.queries.ts';
import { gatehouseAccessTokenHook } from './tokens/claims-hook.ts';
import { hashOpaqueToken, newOpaqueToken } from './tokens/opaque-tokens.ts';
import { type TokenResponse, toPublicUser } from './user.schemas.ts';

// Many services revoke sessions; the statements live with the other session SQL.
export {
  detachSession,
  isSessionLive,
  revokeClientSessions,
  revokeUserSessions,
} from './sessions.queries.ts';

/**
 * Ends one session, the one way a single session ends (logout, revocation, a reused refresh token):
 * the caller audits that session; the OAuth grants' sessions that end with it (opened from it as a
 * browser session, docs/api.md §17) get one `session.revoke` entry each, so each has its
 * `session.revoked` event naming its client, as when the grant itself ends.
 */
export async function revokeSession(db: Kysely<DB>, sessionId: string, reason: string): Promise<void> {
  const children = await revokeSessionRows(db, sessionId, reason);
  for (const child of children) {
    await recordAudit(db, {
      action: 'session.revoke',
      actor: { type: 'system' },
      target: { type: 'session', id: child.id },
      details: {
        user_id: child.user_id,
        reason,
        ...(child.client_id !== null && { client_id: child.client_id }),
      },
    });
  }
}

/** Where a session was opened from (shown in the profile's session list, kept for audit). */
export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
  /**
   * What the request says of its language (API §24): a mail it causes is written in it when its
   * recipient has no `locale`. The hosted pages send `Accept-Language` equal to their own language.
   */
  language?: { cookie: string | null; acceptLanguage: string | null };
}

/**
 * How the user proved who they are when a session opens. Every access token of the session carries
 * it as `amr` and `auth_time` (RFC 9068, docs/verifying-tokens.md); a refresh keeps both unchanged,
 * so a step up (a second factor, say) means a new session with the methods listed here.
 */
export interface SessionAuthentication {
  /**
   * RFC 8176 method values, e.g. `['pwd']` (password), `['fed']` (an external identity provider),
   * `['pwd', 'otp']` or `['pwd', 'mfa']` (password and a second factor), `['hwk', 'user']` (passkey).
   */
  amr: readonly string[];
  /** When the authentication happened (epoch ms); defaults to now, the session's opening. */
  authTime?: number;
}

/** A password login (or a password just set or changed by its owner). */
export const PASSWORD_LOGIN: SessionAuthentication = Object.freeze({ amr: Object.freeze(['pwd']) });
/** A sign-in through the external identity provider (docs/api.md §7). */
export const FEDERATED_LOGIN: SessionAuthentication = Object.freeze({ amr: Object.freeze(['fed']) });

/**
 * Opens a new session for a user and returns its first token pair, and nothing else: no login is
 * recorded, nothing audited. Not exported from identity/index.ts: every sign-in goes through
 * signIn (sign-in/sign-in.ts); tests import this file directly to make a session fixture.
 */
export async function openSession(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  authentication: SessionAuthentication,
  db: Kysely<DB> | Transaction<DB> = ctx.db,
): Promise<TokenResponse> {
  return (await startSession(ctx, user, client, authentication, db)).tokens;
}

/** openSession that also names the new session (for the audit entry written in the same transaction). */
export async function startSession(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  authentication: SessionAuthentication,
  db: Kysely<DB> | Transaction<DB> = ctx.db,
): Promise<{ sessionId: string; tokens: TokenResponse }> {
  const opened = await insertNewSession(ctx, user, client, authentication, null, db);
  const { sessionId, now, amr, authTime, ttlS } = opened;
  const refreshToken = newOpaqueToken();
  await insertRefreshToken(db, {
    id: uuidv7(),
    sessionId,
    tokenHash: hashOpaqueToken(refreshToken),
    createdAt: now,
    expiresAt: now + ttlS * 1000,
  });
  const roles = await tokenRolesOf(ctx, user.id, db);
  // The claims hook (docs/claims-hook.md) runs here, inside the sign-in's transaction: when it
  // refuses (TOKEN_HOOK_FAILURE=deny) the session, its refresh token and the login roll back.
  const { token } = await ctx.accessTokens.sign(
    { user, session: { id: sessionId, amr, authTime }, roles },
    gatehouseAccessTokenHook(ctx, user),
  );
  return {
    sessionId,
    tokens: {
      access_token: token,
      token_type: 'Bearer',
      expires_in: ctx.config.accessTokenTtlS,
      refresh_token: refreshToken,
      refresh_expires_in: ttlS,
      user: toPublicUser(user),
    },
  };
}

/**
 * Opens an enrolment-only session (REQUIRE_MFA, src/identity/require-mfa.ts): no refresh token, it
 * lives ENROLLMENT_TTL_S, and its access token is issued for ENROLLMENT_AUDIENCE (the signer decides
 * that from the same rule). Not exported from identity/index.ts: openSignInSession (sign-in/) calls it.
 */
export async function startEnrollmentSession(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  authentication: SessionAuthentication,
  db: Kysely<DB> | Transaction<DB>,
): Promise<{ sessionId: string; grant: EnrollmentGrant }> {
  const { sessionId, amr, authTime } = await insertNewSession(
    ctx,
    user,
    client,
    authentication,
    null,
    db,
    ENROLLMENT_TTL_S,
  );
  const { token, claims } = await ctx.accessTokens.sign({ user, session: { id: sessionId, amr, authTime } });
  if (claims.aud !== ENROLLMENT_AUDIENCE) throw new Error('an enrolment-only session got a full token');
  const expiresIn = Math.min(ctx.config.accessTokenTtlS, ENROLLMENT_TTL_S);
  return { sessionId, grant: { enrollment_token: token, expires_in: expiresIn } };
}

/** Whose a grant's session is (docs/api.md §17, "Sessions are one"). */
export interface AppSessionOwner {
  /** The OAuth client the grant is for. */
  clientId: string;
  /** The browser session it ends with (a grant without `offline_access`), or null. */
  parentId: string | null;
}

/**
 * Opens the session of an OAuth grant: listed and revoked like any other, but it holds no Gatehouse
 * token (docs/api.md §17: OAuth clients never get tokens that `/api/v1` accepts); the provider's
 * tokens live while it does. Not exported from identity/index.ts: openSignInSession (sign-in/) calls it.
 */
export async function startAppSession(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  authentication: SessionAuthentication,
  owner: AppSessionOwner,
  db: Kysely<DB> | Transaction<DB> = ctx.db,
): Promise<string> {
  return (await insertNewSession(ctx, user, client, authentication, owner, db)).sessionId;
}

/**
 * How far a use (a sign-in or a refresh) carries a session and its refresh token: REFRESH_TOKEN_TTL_S,
 * or SESSION_IDLE_TIMEOUT_S when it is set and shorter. A session whose end is not moved by a use
 * within this window has been idle that long and ends (docs/security.md, "Session timeouts").
 */
export function idleWindowS(config: AppContext['config']): number {
  return Math.min(config.refreshTokenTtlS, config.sessionIdleTimeoutS ?? Number.POSITIVE_INFINITY);
}

/**
 * The longest a new session lives before its first refresh: the idle window, or less when
 * SESSION_MAX_LIFETIME_S is shorter.
 */
export function sessionTtlS(ctx: AppContext): number {
  return Math.min(idleWindowS(ctx.config), ctx.config.sessionMaxLifetimeS);
}

async function insertNewSession(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  authentication: SessionAuthentication,
  owner: AppSessionOwner | null,
  db: Kysely<DB> | Transaction<DB>,
  fixedTtlS?: number,
) {
  if (authentication.amr.length === 0) throw new Error('a session needs at least one amr value');
  const now = Date.now();
  const amr = [...authentication.amr];
  const authTime = authentication.authTime ?? now;
  const sessionId = uuidv7();
  // The first refresh token lives as long as the session can.
  // An OAuth grant's session follows the authorization server's lifetimes (docs/oauth.md), not the
  // idle window of Gatehouse's own refresh tokens, which it never uses.
  const grantTtlS = Math.min(ctx.config.refreshTokenTtlS, ctx.config.sessionMaxLifetimeS);
  const ttlS = fixedTtlS ?? (owner ? grantTtlS : sessionTtlS(ctx));
  await insertSession(db, {
    id: sessionId,
    user_id: user.id,
    created_at: now,
    last_used_at: now,
    expires_at: now + ttlS * 1000,
    revoked_at: null,
    revoked_reason: null,
    // docs/api.md §13: the header as sent, cut at 256 characters.
    user_agent: client.userAgent?.slice(0, 256) ?? null,
    ip: client.ip,
    amr: JSON.stringify(amr),
    auth_time: authTime,
    client_id: owner?.clientId ?? null,
    parent_id: owner?.parentId ?? null,
  });
  return { sessionId, now, amr, authTime, ttlS };
}

/** The client address and user agent of a request (the address honours TRUST_PROXY via Fastify). */
export function clientInfo(request: {
  ip: string;
  headers: Record<string, string | string[] | undefined>;
}): ClientInfo {
  const ua = request.headers['user-agent'];
  const accept = request.headers['accept-language'];
  const cookie = request.headers.cookie;
  return {
    ip: request.ip ?? null,
    userAgent: typeof ua === 'string' ? ua : null,
    language: {
      // The picker's cookie, read by name only (no cookie library in the identity core).
      cookie:
        typeof cookie === 'string' ? (/(?:^|;\s*)gatehouse_lang=([^;]*)/.exec(cookie)?.[1] ?? null) : null,
      acceptLanguage: typeof accept === 'string' ? accept : null,
    },
  };
}

/**
 * Ends one session that the service itself ends (the authorization server: an RP-initiated logout,
 * a reused refresh token, an RFC 7009 revocation) through revokeSession, with one audit entry made
 * by `audit` from the live row, in one transaction, so a `session.revoked` event follows (docs/api.md
 * §19). A session already ended changes nothing and is not audited again. Answers whether it ended.
 */
export async function endSession(
  db: Kysely<DB>,
  sessionId: string,
  reason: string,
  audit: (session: SessionRow) => AuditEvent,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const found = await findSessionWithUser(trx, sessionId);
    if (!found || found.session.revoked_at !== null) return false;
    await revokeSession(trx, sessionId, reason);
    await recordAudit(trx, audit(found.session));
    return true;
  });
}
