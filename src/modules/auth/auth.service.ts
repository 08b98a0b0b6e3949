import type { AuthContext } from '../../http/guard.ts';
import { verifyUserPassword } from '../../identity/budgets/password-attempt.ts';
import type { LoginThrottle, ThrottleTicket } from '../../identity/budgets/throttle.ts';
import {
  type AuditEvent,
  type ClientInfo,
  completeSignIn,
  findUserByEmail,
  normalizeEmail,
  PASSWORD_LOGIN,
  recordAudit,
  revokeSession,
  revokeUserSessions,
  type TokenResponse,
  updateUser,
} from '../../identity/index.ts';
import { endOutstandingLinks } from '../../identity/links/credential-events.ts';
import { HashCapacityError } from '../../identity/passwords/passwords.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { countLogin } from '../core/index.ts';
import { issueMfaToken, mfaRequired, secondFactors } from '../mfa/index.ts';
import { deleteExpiredRefreshTokens } from './auth.queries.ts';
import { replaceGeneratedPassword } from './generated-password.ts';

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
  input: { email: string; password: string; new_password?: string },
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
    verified = await verifyUserPassword(ctx, user, input.password);
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
  if (ctx.config.requireVerifiedEmail && user.email_verified !== 1) {
    // REQUIRE_VERIFIED_EMAIL (docs/api.md §12): said only to someone who knows the password, whose
    // attempt is no wrong guess and is given back.
    await throttle.release(ticket);
    await recordAudit(ctx.db, loginFailure(user, email, 'email_not_verified', client));
    countLogin(ctx, 'failure');
    throw new ApiError('email_not_verified', {
      detail: 'Confirm your e-mail address first (POST /api/v1/email/verification sends a new link)',
    });
  }

  let replaced: boolean;
  try {
    replaced = await replaceGeneratedPassword(ctx, user, input.password, input.new_password, client);
  } catch (err) {
    // The password was right: no wrong guess, the attempt is given back (docs/auth.md, "First admin").
    await throttle.release(ticket);
    if (err instanceof ApiError && err.code === 'password_change_required') {
      await recordAudit(ctx.db, loginFailure(user, email, 'password_change_required', client));
      countLogin(ctx, 'failure');
    }
    throw err;
  }
  // A replaced generated password is hashed already; the typed one must never be written back.
  const newHash = replaced ? null : await rehashIfNeeded(ctx, user.password_hash, input.password);
  let methods: Awaited<ReturnType<typeof secondFactors>>;
  try {
    methods = await secondFactors(ctx, ctx.db, user.id);
  } catch (err) {
    // 403 second_factor_unavailable (docs/api.md §16): said only to someone who knows the password,
    // whose attempt is no wrong guess and is given back.
    if (!(err instanceof ApiError) || err.code !== 'second_factor_unavailable') throw err;
    await throttle.release(ticket);
    await recordAudit(ctx.db, loginFailure(user, email, 'second_factor_unavailable', client));
    countLogin(ctx, 'failure');
    throw err;
  }
  if (methods.length > 0) {
    // A correct password alone resets nothing (docs/api.md §13): the counts clear when the login
    // completes. This attempt was no wrong guess, so it is given back.
    await throttle.release(ticket);
    const mfaToken = await ctx.db.transaction().execute(async (trx) => {
      if (newHash !== null) await updateUser(trx, user.id, { password_hash: newHash });
      await recordAudit(trx, {
        action: 'login.mfa_required',
        actor: { type: 'anonymous' },
        target: { type: 'user', id: user.id },
        client,
        details: { method: 'password', methods },
      });
      return issueMfaToken(trx, user.id, 'pwd');
    });
    throw mfaRequired(methods, mfaToken);
  }
  const tokens = await ctx.db.transaction().execute(async (trx) => {
    await throttle.succeed(ticket, trx);
    const details = { method: 'password', rehashed: newHash !== null };
    return completeSignIn(ctx, trx, user, client, PASSWORD_LOGIN.amr, details, newHash);
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
  reason:
    | 'invalid_credentials'
    | 'account_disabled'
    | 'email_not_verified'
    | 'second_factor_unavailable'
    | 'password_change_required',
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
      // docs/api.md §16: "log out everywhere" also ends every outstanding link and mfa_token.
      await endOutstandingLinks(trx, auth.user.id);
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
