import type { AppContext } from '../../context.ts';
import type { UserRow } from '../../db/schema.ts';
import { ApiError } from '../../errors.ts';
import type { ThrottleTicket } from '../../security/throttle.ts';
import { recordAudit } from '../audit/audit.queries.ts';
import type { ClientInfo } from '../auth/sessions.service.ts';
import { loginThrottle, reserveLogin } from './mfa-login.service.ts';

/**
 * Reserves one attempt of the caller's login throttle before a secret is checked (docs/api.md §13:
 * wrong codes and wrong current passwords count like failed logins). Spent: 429.
 */
export function reserveLoginAttempt(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
): Promise<ThrottleTicket> {
  return reserveLogin(ctx, user.email, client.ip);
}

/** Gives a reserved attempt back (the secret was right, or was never checked). */
export function releaseLoginAttempt(ctx: AppContext, ticket: ThrottleTicket): Promise<void> {
  return loginThrottle(ctx).release(ticket);
}

/**
 * Checks `current_password` of a signed-in user before a factor is added (a stolen access token
 * alone cannot add its own factor). Wrong: 401 `invalid_credentials`, counted and audited like a
 * failed login. Right: the attempt is given back — but nothing is reset by a password alone.
 */
export async function confirmCurrentPassword(
  ctx: AppContext,
  user: UserRow,
  password: string,
  client: ClientInfo,
  purpose: string,
): Promise<void> {
  const reservation = await reserveLoginAttempt(ctx, user, client);
  const ok = user.password_hash !== null && (await ctx.passwords.verify(user.password_hash, password));
  if (!ok) {
    if (user.password_hash === null) await ctx.passwords.verifyDummy(password);
    await recordAudit(ctx.db, {
      action: 'login.failure',
      outcome: 'failure',
      actor: { type: 'user', id: user.id },
      target: { type: 'user', id: user.id },
      client,
      details: { method: 'password', reason: 'invalid_credentials', purpose },
    });
    throw new ApiError('invalid_credentials', { detail: 'The current password is not correct' });
  }
  await releaseLoginAttempt(ctx, reservation);
}
