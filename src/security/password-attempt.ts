import type { AppContext } from '../context.ts';
import type { UserRow } from '../db/schema.ts';
import { ApiError } from '../errors.ts';
import { type Budget, release, reserveOrThrow } from './attempt-budget.ts';
import {
  ACCOUNT_FAILURE_LIMIT,
  ACCOUNT_WINDOW_MS,
  ADDRESS_WINDOW_MS,
  loginAccountKey,
  loginAddressKey,
} from './throttle.ts';

/**
 * A password check outside login (e-mail change, unauthenticated verification request), throttled
 * like login on the same counters: the attempt is reserved against the account-and-address and
 * the address budgets **before** argon2 runs (429 `rate_limited` when spent), kept when the password
 * is wrong and given back when it is right. An unknown account, one without a password or an
 * invited one spends a dummy verification, so every refusal takes as long as a wrong password.
 * Returns whether the password is the user's.
 */
export async function checkPasswordReserved(
  ctx: AppContext,
  user: UserRow | undefined,
  email: string,
  password: string,
  ip: string | null,
): Promise<boolean> {
  const budgets: Budget[] = [
    { key: loginAccountKey(email, ip), limit: ACCOUNT_FAILURE_LIMIT, windowMs: ACCOUNT_WINDOW_MS },
    {
      key: loginAddressKey(ip),
      limit: ctx.config.loginFailuresPerAddressPerMin,
      windowMs: ADDRESS_WINDOW_MS,
    },
  ];
  const reservation = await reserveOrThrow(
    ctx.db,
    budgets,
    'Too many failed password attempts; try again later',
  );
  let ok = false;
  if (!user || user.password_hash === null || user.status === 'invited') {
    await ctx.passwords.verifyDummy(password);
  } else {
    ok = await ctx.passwords.verify(user.password_hash, password);
  }
  if (ok) await release(ctx.db, reservation);
  return ok;
}

/** The one refusal of a wrong password (the same words as login's). */
export function wrongPassword(): ApiError {
  return new ApiError('invalid_credentials', { detail: 'The email or password is not correct' });
}
