import type { AuthContext } from '../../http/guard.ts';
import { verifyUserPassword } from '../../identity/budgets/password-attempt.ts';
import type { LoginThrottle } from '../../identity/budgets/throttle.ts';
import {
  type ClientInfo,
  deleteExpiredRefreshTokens,
  findUserByEmail,
  mfaRequired,
  normalizeEmail,
  PASSWORD_LOGIN,
  recordAudit,
  refuseSignIn,
  revokeSession,
  revokeUserSessions,
  type SignInWay,
  signIn,
  type TokenResponse,
  withLoginAttempt,
} from '../../identity/index.ts';
import { endOutstandingLinks } from '../../identity/links/credential-events.ts';
import { HashCapacityError } from '../../identity/passwords/passwords.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { replaceGeneratedPassword } from './generated-password.ts';

/** The one refusal for every wrong-credential case, so none of them can be told apart. */
export function invalidCredentials(): ApiError {
  return new ApiError('invalid_credentials', { detail: 'The email or password is not correct' });
}

/** The password login as a way in: its entries name `method: "password"`, its outcomes are counted. */
const PASSWORD_WAY: SignInWay = { method: 'password' };

/**
 * POST /login (docs/api.md §5). Order matters: the attempt is reserved against the throttle's budgets
 * before any hashing (one conditional write each, withLoginAttempt), so a throttled attempt costs no
 * argon2 and parallel guesses cannot outrun the budget; unknown emails, accounts without a password
 * and invited accounts spend one dummy verification, so they take as long as a wrong password;
 * `account_disabled` is only said to someone who knows the password. A wrong password keeps its
 * reservation (that is the counted failure); a right one resets the account's count. Every outcome
 * is counted in the metrics; a success or refusal is audited, a throttled attempt is not (a flood
 * must not become a flood of writes).
 */
export async function login(
  ctx: AppContext,
  input: { email: string; password: string; new_password?: string },
  client: ClientInfo,
): Promise<TokenResponse> {
  const email = normalizeEmail(input.email);
  const tried = email ?? input.email.trim().toLowerCase();
  const outcome = await withLoginAttempt(
    ctx,
    { way: PASSWORD_WAY, client, account: tried },
    async (attempt) => {
      // No password judged (hashing at capacity, database down): withLoginAttempt gives the attempt back.
      const user = email === null ? undefined : await findUserByEmail(ctx.db, email);
      const verified = await verifyUserPassword(ctx, user, input.password);
      const refuse = (reason: PasswordRefusal, wrongGuess: boolean, error: ApiError) =>
        refuseSignIn(
          attempt,
          { user, reason, wrongGuess, ...(email !== null && { details: { email } }) },
          error,
        );
      // docs/api.md §23 sso_required, judged after the password so every answer at such a domain is the
      // same 403 (an unknown address, a wrong password, a right one) but an admin's right password.
      if (email !== null)
        await checkAddressOrRefuse(ctx, email, verified ? user : undefined, refuse, !verified);
      if (!verified || !user || user.password_hash === null) {
        // The reservation stays: it is this failure's count.
        throw await refuse('invalid_credentials', true, invalidCredentials());
      }
      if (user.status === 'disabled') {
        // Not a wrong guess: the attempt is given back, and the entry is the only write.
        throw await refuse(
          'account_disabled',
          false,
          new ApiError('account_disabled', { detail: 'This account has been disabled' }),
        );
      }
      if (ctx.config.requireVerifiedEmail && user.email_verified !== 1) {
        // REQUIRE_VERIFIED_EMAIL (docs/api.md §12): said only to someone who knows the password, whose
        // attempt is no wrong guess and is given back.
        throw await refuse(
          'email_not_verified',
          false,
          new ApiError('email_not_verified', {
            detail: 'Confirm your e-mail address first (POST /api/v1/email/verification sends a new link)',
          }),
        );
      }
      let replaced: boolean;
      try {
        replaced = await replaceGeneratedPassword(ctx, user, input.password, input.new_password, client);
      } catch (err) {
        // The password was right: no wrong guess, the attempt is given back (docs/auth.md, "First admin").
        // Asked for a new password, or handed one the policy refuses: either way the sign-in is refused
        // through the pipeline, audited and counted like every other refusal after the password.
        if (
          err instanceof ApiError &&
          (err.code === 'password_change_required' || err.code === 'weak_password')
        ) {
          throw await refuse(err.code, false, err);
        }
        throw err;
      }
      // A replaced generated password is hashed already; the typed one must never be written back.
      const newHash = replaced ? null : await rehashIfNeeded(ctx, user.password_hash, input.password);
      try {
        return await ctx.db.transaction().execute((trx) =>
          signIn(ctx, trx, {
            user,
            client,
            amr: PASSWORD_LOGIN.amr,
            details: { method: 'password', rehashed: newHash !== null },
            attempt,
            newHash,
            secondFactor: { firstFactor: 'pwd', details: { method: 'password' } },
          }),
        );
      } catch (err) {
        // 403 second_factor_unavailable (docs/api.md §16): said only to someone who knows the password,
        // whose attempt is no wrong guess and is given back.
        if (err instanceof ApiError && err.code === 'second_factor_unavailable') {
          throw await refuse('second_factor_unavailable', false, err);
        }
        throw err;
      }
    },
  );
  if (outcome.kind === 'second_factor_due') throw mfaRequired(outcome.methods, outcome.mfaToken);
  return outcome.tokens;
}

type PasswordRefusal =
  | 'sso_required'
  | 'invalid_credentials'
  | 'account_disabled'
  | 'email_not_verified'
  | 'second_factor_unavailable'
  | 'password_change_required'
  | 'weak_password';

/**
 * Runs the sign-in pipeline's address checks (docs/api.md §23 sso_required) before a way in goes on;
 * a refusal is audited and counted through the attempt's `refuse`, a wrong guess keeping its
 * reservation.
 */
async function checkAddressOrRefuse(
  ctx: AppContext,
  email: string,
  user: UserRow | undefined,
  refuse: (reason: PasswordRefusal, wrongGuess: boolean, error: ApiError) => Promise<ApiError>,
  wrongGuess: boolean,
): Promise<void> {
  try {
    await ctx.signIn.checkAddress(ctx.db, { email, user: user ?? null });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'sso_required')
      throw await refuse('sso_required', wrongGuess, err);
    throw err;
  }
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
