import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { isVerifiableHash } from '../passwords/passwords.ts';
import { createLoginThrottle } from './throttle.ts';

/**
 * Checks `password` against the user's stored hash. No account, no password, an invited account or
 * a stored hash the hasher would refuse unread (malformed, over the cost ceilings) spends the same
 * dummy verification and answers false: an instant refusal would tell that the account exists.
 */
export async function verifyUserPassword(
  ctx: AppContext,
  user: UserRow | undefined,
  password: string,
): Promise<boolean> {
  if (
    !user ||
    user.password_hash === null ||
    user.status === 'invited' ||
    !isVerifiableHash(user.password_hash)
  ) {
    await ctx.passwords.verifyDummy(password);
    return false;
  }
  return ctx.passwords.verify(user.password_hash, password);
}

/**
 * A password check outside login (e-mail change, unauthenticated verification request), throttled
 * like login on login's own counters (src/identity/budgets/throttle.ts): the attempt is reserved against
 * the account-and-address and the address budgets **before** argon2 runs (429 `rate_limited` when
 * spent), kept when the password is wrong and settled like a successful login when it is right. An
 * unknown account, one without a password or an invited one spends a dummy verification, so every
 * refusal takes as long as a wrong password. Returns whether the password is the user's.
 */
export async function checkPasswordReserved(
  ctx: AppContext,
  user: UserRow | undefined,
  email: string,
  password: string,
  ip: string | null,
): Promise<boolean> {
  const throttle = createLoginThrottle(ctx.db, {
    failuresPerAddressPerMin: ctx.config.loginFailuresPerAddressPerMin,
  });
  const ticket = await throttle.reserve(email, ip);
  let ok = false;
  try {
    ok = await verifyUserPassword(ctx, user, password);
  } catch (err) {
    // No password was judged (hashing at capacity, database down): the attempt must not count.
    await throttle.release(ticket).catch(() => undefined);
    throw err;
  }
  if (ok) await throttle.succeed(ticket);
  return ok;
}

/** The one refusal of a wrong password (the same words as login's). */
export function wrongPassword(): ApiError {
  return new ApiError('invalid_credentials', { detail: 'The email or password is not correct' });
}
