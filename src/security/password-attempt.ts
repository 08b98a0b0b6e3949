import type { AppContext } from '../context.ts';
import type { UserRow } from '../db/schema.ts';
import { ApiError } from '../errors.ts';
import { isVerifiableHash } from './passwords.ts';
import { createLoginThrottle } from './throttle.ts';

/**
 * A password check outside login (e-mail change, unauthenticated verification request), throttled
 * like login on login's own counters (src/security/throttle.ts): the attempt is reserved against
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
    // An unverifiable stored hash (malformed, over the ceilings) costs the same as no account.
    if (
      !user ||
      user.password_hash === null ||
      user.status === 'invited' ||
      !isVerifiableHash(user.password_hash)
    ) {
      await ctx.passwords.verifyDummy(password);
    } else {
      ok = await ctx.passwords.verify(user.password_hash, password);
    }
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
