import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../context.ts';
import type { UserRow } from '../../db/schema.ts';
import { ApiError } from '../../errors.ts';
import type { AuthContext } from '../../security/guard.ts';
import { hashOpaqueToken, newOpaqueToken } from '../../security/opaque-tokens.ts';
import { HashCapacityError } from '../../security/passwords.ts';
import { openSuccessor, type Successor, sealSuccessor } from '../../security/successor-box.ts';
import type { LoginThrottle, ThrottleTicket } from '../../security/throttle.ts';
import { type AuditEvent, recordAudit } from '../audit/audit.queries.ts';
import { countLogin } from '../core/metrics.ts';
import { normalizeEmail } from '../users/email.ts';
import { findUserByEmail } from '../users/users.queries.ts';
import { toPublicUser } from '../users/users.schemas.ts';
import {
  deleteExpiredRefreshTokens,
  findRefreshTokenForRotation,
  insertRefreshToken,
  markRotated,
  recordLogin,
  touchSession,
} from './auth.queries.ts';
import {
  type ClientInfo,
  PASSWORD_LOGIN,
  revokeSession,
  revokeUserSessions,
  startSession,
  type TokenResponse,
} from './sessions.service.ts';

/** The one refusal for every wrong-credential case, so none of them can be told apart. */
export function invalidCredentials(): ApiError {
  return new ApiError('invalid_credentials', { detail: 'The email or password is not correct' });
}

/**
 * POST /login (docs/api.md §5). Order matters: the attempt is reserved against the throttle's budgets
 * before any hashing (one conditional write each), so a throttled attempt costs no argon2 and
 * parallel guesses cannot outrun the budget; unknown emails, accounts without a password and
 * invited accounts spend one dummy verification, so they take as long as a wrong password;
 * `account_disabled` is only said to someone who knows the password. A wrong password keeps its
 * reservation (that is the counted failure); a right one resets the account's count. Every outcome
 * is counted in the metrics; a success or refusal is audited, a throttled attempt is not (a flood
 * must not become a flood of writes).
 */
export async function login(
  ctx: AppContext,
  throttle: LoginThrottle,
  input: { email: string; password: string },
  client: ClientInfo,
): Promise<TokenResponse> {
  const email = normalizeEmail(input.email);
  const tried = email ?? input.email.trim().toLowerCase();
  let ticket: ThrottleTicket;
  try {
    ticket = await throttle.reserve(tried, client.ip);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'rate_limited') countLogin(ctx, 'rate_limited');
    throw err;
  }
  let user: UserRow | undefined;
  let verified = false;
  try {
    user = email === null ? undefined : await findUserByEmail(ctx.db, email);
    if (!user || user.password_hash === null || user.status === 'invited') {
      await ctx.passwords.verifyDummy(input.password);
    } else {
      verified = await ctx.passwords.verify(user.password_hash, input.password);
    }
  } catch (err) {
    // No password was judged (hashing at capacity, database down): the attempt must not count.
    await throttle.release(ticket).catch(() => undefined);
    throw err;
  }
  if (!verified || !user || user.password_hash === null) {
    // The reservation stays: it is this failure's count.
    await recordAudit(ctx.db, loginFailure(user, email, 'invalid_credentials', client));
    countLogin(ctx, 'failure');
    throw invalidCredentials();
  }
  if (user.status === 'disabled') {
    // Not a wrong guess: the attempt is given back, and the entry is the only write.
    await throttle.release(ticket);
    await recordAudit(ctx.db, loginFailure(user, email, 'account_disabled', client));
    countLogin(ctx, 'failure');
    throw new ApiError('account_disabled', { detail: 'This account has been disabled' });
  }

  const newHash = await rehashIfNeeded(ctx, user.password_hash, input.password);
  const now = Date.now();
  const current: UserRow = { ...user, last_login_at: now, password_hash: newHash ?? user.password_hash };
  const tokens = await ctx.db.transaction().execute(async (trx) => {
    await recordLogin(trx, user.id, now, newHash);
    await throttle.succeed(ticket, trx);
    const session = await startSession(ctx, current, client, PASSWORD_LOGIN, trx);
    await recordAudit(trx, {
      action: 'login.success',
      actor: { type: 'user', id: user.id },
      target: { type: 'user', id: user.id },
      client,
      details: { method: 'password', session_id: session.sessionId, rehashed: newHash !== null },
    });
    return session.tokens;
  });
  countLogin(ctx, 'success');
  return tokens;
}

/**
 * The `login.failure` entry of a password login: anonymous, naming the account when there is one.
 * The typed e-mail is kept only when it is a well-formed address: people type passwords into the
 * e-mail field, and the audit log must not collect them.
 */
function loginFailure(
  user: UserRow | undefined,
  email: string | null,
  reason: 'invalid_credentials' | 'account_disabled',
  client: ClientInfo,
): AuditEvent {
  return {
    action: 'login.failure',
    outcome: 'failure',
    actor: { type: 'anonymous' },
    target: user ? { type: 'user', id: user.id } : null,
    client,
    details: { method: 'password', ...(email !== null && { email }), reason },
  };
}

/** A fresh hash at today's parameters, or null when none is due or the hasher is saturated (next login retries). */
async function rehashIfNeeded(ctx: AppContext, storedHash: string, password: string): Promise<string | null> {
  if (!ctx.passwords.needsRehash(storedHash)) return null;
  try {
    return await ctx.passwords.hash(password);
  } catch (err) {
    if (!(err instanceof HashCapacityError)) throw err;
    ctx.log.info('password rehash skipped: hashing at capacity');
    return null;
  }
}

type RotationOutcome =
  | {
      kind: 'issued';
      user: UserRow;
      successor: Successor;
      refreshExpiresAt: number;
      /** Seconds the new refresh token lives, counted from the rotation (not a replay). */
      refreshExpiresInS: number;
      replay: boolean;
    }
  | { kind: 'invalid' }
  | { kind: 'reused'; sessionId: string };

/**
 * POST /refresh-token (docs/api.md §5): single-use rotation with reuse detection. The first use of a
 * token issues a successor and seals it under a key derived from the token; a repeat within
 * REFRESH_REUSE_GRACE_S opens that box and answers with the same pair; a repeat after it revokes
 * the session. The decision and its writes happen in one transaction on a locked row.
 */
export async function refresh(
  ctx: AppContext,
  presented: string,
  client: ClientInfo,
): Promise<TokenResponse> {
  const { config } = ctx;
  const outcome = await ctx.db.transaction().execute(async (trx): Promise<RotationOutcome> => {
    const now = Date.now();
    const state = await findRefreshTokenForRotation(trx, hashOpaqueToken(presented), ctx.database.dialect);
    // Sliding, but bounded: no refresh carries a session past its absolute end (ASVS 10.4.8).
    const sessionEndsAt = state ? state.sessionCreatedAt + config.sessionMaxLifetimeS * 1000 : 0;
    if (
      !state ||
      sessionEndsAt <= now ||
      state.expiresAt <= now ||
      state.sessionRevokedAt !== null ||
      state.sessionExpiresAt <= now ||
      state.user.status !== 'active'
    ) {
      return { kind: 'invalid' };
    }

    if (state.rotatedAt !== null) {
      if (now < state.rotatedAt + config.refreshReuseGraceS * 1000 && state.successorBox !== null) {
        const successor = openSuccessor(presented, state.id, state.successorBox);
        // The hash matched, so the box opens unless it was damaged; refuse without revoking then.
        if (!successor) return { kind: 'invalid' };
        const refreshExpiresAt = Math.min(state.rotatedAt + config.refreshTokenTtlS * 1000, sessionEndsAt);
        return {
          kind: 'issued',
          user: state.user,
          successor,
          refreshExpiresAt,
          refreshExpiresInS: 0,
          replay: true,
        };
      }
      await revokeSession(trx, state.sessionId, 'refresh_token_reused');
      // Committed with the revocation; the 401 is thrown only after the commit.
      await recordAudit(trx, {
        action: 'refresh.reuse',
        outcome: 'failure',
        actor: { type: 'anonymous' },
        target: { type: 'session', id: state.sessionId },
        client,
        details: { user_id: state.user.id },
      });
      return { kind: 'reused', sessionId: state.sessionId };
    }

    const refreshToken = newOpaqueToken();
    const refreshExpiresAt = Math.min(now + config.refreshTokenTtlS * 1000, sessionEndsAt);
    await insertRefreshToken(trx, {
      id: uuidv7(),
      sessionId: state.sessionId,
      tokenHash: hashOpaqueToken(refreshToken),
      createdAt: now,
      expiresAt: refreshExpiresAt,
    });
    const { token, claims } = await ctx.accessTokens.sign({
      user: state.user,
      session: {
        id: state.sessionId,
        amr: state.sessionAmr === null ? null : (JSON.parse(state.sessionAmr) as string[]),
        authTime: state.sessionAuthTime ?? state.sessionCreatedAt,
      },
    });
    const successor: Successor = { accessToken: token, accessExp: claims.exp, refreshToken };
    await markRotated(trx, state.id, now, sealSuccessor(presented, state.id, successor));
    await touchSession(trx, state.sessionId, now, refreshExpiresAt);
    const refreshExpiresInS = Math.floor((refreshExpiresAt - now) / 1000);
    return {
      kind: 'issued',
      user: state.user,
      successor,
      refreshExpiresAt,
      refreshExpiresInS,
      replay: false,
    };
  });

  if (outcome.kind === 'invalid') {
    throw new ApiError('refresh_token_invalid', {
      detail: 'The refresh token is unknown, expired or revoked',
    });
  }
  if (outcome.kind === 'reused') {
    ctx.log.warn({ session_id: outcome.sessionId }, 'refresh token reused after rotation: session revoked');
    throw new ApiError('refresh_token_reused', {
      detail: 'This refresh token was already used; the session has been revoked',
    });
  }
  // A replay hands out a pair issued up to the grace window ago: report what is left of it.
  const now = Date.now();
  const { successor } = outcome;
  return {
    access_token: successor.accessToken,
    token_type: 'Bearer',
    expires_in: outcome.replay
      ? Math.max(0, successor.accessExp - Math.floor(now / 1000))
      : config.accessTokenTtlS,
    refresh_token: successor.refreshToken,
    refresh_expires_in: outcome.replay
      ? Math.max(0, Math.floor((outcome.refreshExpiresAt - now) / 1000))
      : outcome.refreshExpiresInS,
    user: toPublicUser(outcome.user),
  };
}

/** POST /logout: ends the caller's session, or with `global` every session of the user. */
export async function logout(
  ctx: AppContext,
  auth: AuthContext,
  scope: 'local' | 'global',
  client: ClientInfo,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const details: Record<string, unknown> = { scope };
    if (scope === 'global') {
      details.sessions_revoked = await revokeUserSessions(trx, auth.user.id, 'logout_global');
    } else {
      await revokeSession(trx, auth.session.id, 'logout');
    }
    await recordAudit(trx, {
      action: 'logout',
      actor: { type: 'user', id: auth.user.id },
      target: { type: 'session', id: auth.session.id },
      client,
      details,
    });
  });
}

/**
 * Housekeeping run on a timer by every instance (idempotent, so several at once do no harm):
 * spent throttle counters and expired refresh tokens. Sessions stay, for the record.
 */
export async function pruneAuthState(
  ctx: AppContext,
  throttle: LoginThrottle,
  now = Date.now(),
): Promise<{ counters: number; refreshTokens: number }> {
  const counters = await throttle.prune(now);
  const refreshTokens = await deleteExpiredRefreshTokens(ctx.db, now);
  return { counters, refreshTokens };
}
