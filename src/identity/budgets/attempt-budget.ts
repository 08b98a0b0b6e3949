import { ApiError } from '../../platform/api-error.ts';
import type { Db } from '../../platform/db/schema.ts';
import { readCounter, releaseCounter, reserveCounter } from './throttle.queries.ts';

/** One budget: at most `limit` attempts counted under `key` in a fixed window of `windowMs`. */
export interface Budget {
  key: string;
  limit: number;
  windowMs: number;
}

/** Attempts that were counted; give them to `release` when the attempt turned out not to count. */
export interface Reservation {
  readonly held: ReadonlyArray<{ key: string; windowStartedAt: number }>;
}

/** Outcome of `reserveAttempt`: either every budget had room (and now counts it), or none counts it. */
export type ReserveResult = { ok: true; reservation: Reservation } | { ok: false; retryAfterMs: number };

/**
 * The one primitive for every check of a secret (password, TOTP, recovery code, link token) and
 * every budgeted send (mails): the attempt is counted **before** the expensive or revealing work,
 * by one conditional write per budget, so N parallel requests can never evaluate more than the
 * budget allows — on SQLite and across PostgreSQL instances alike. A failed attempt simply keeps
 * its reservation; a successful one calls `release` (give the attempt back) or deletes the counter.
 *
 * Budgets are reserved in key order; when one is spent, those already reserved by this call are
 * given back, so a refused attempt counts against nothing.
 */
export async function reserveAttempt(
  db: Db,
  budgets: readonly Budget[],
  now = Date.now(),
): Promise<ReserveResult> {
  const sorted = [...budgets].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const held: Array<{ key: string; windowStartedAt: number }> = [];
  for (const budget of sorted) {
    const row = await reserveCounter(db, budget, now);
    if (row) {
      held.push({ key: row.key, windowStartedAt: Number(row.window_started_at) });
      continue;
    }
    await release(db, { held });
    const spent = await readCounter(db, budget.key);
    const endsAt = spent ? Number(spent.window_started_at) + budget.windowMs : now + budget.windowMs;
    // Another instance may have opened the window a moment after this call's `now`: the wait is
    // never longer than the window itself.
    return { ok: false, retryAfterMs: Math.min(budget.windowMs, Math.max(1000, endsAt - now)) };
  }
  return { ok: true, reservation: { held } };
}

/** Like `reserveAttempt`, but a spent budget throws 429 `rate_limited` with `Retry-After`. */
export async function reserveOrThrow(
  db: Db,
  budgets: readonly Budget[],
  detail = 'Too many attempts; try again later',
): Promise<Reservation> {
  const result = await reserveAttempt(db, budgets);
  if (!result.ok) throw new ApiError('rate_limited', { detail, retryAfterS: result.retryAfterMs / 1000 });
  return result.reservation;
}

/** Gives back every attempt of a reservation (the attempt succeeded, or must not count). */
export async function release(db: Db, reservation: Reservation): Promise<void> {
  for (const h of reservation.held) await releaseCounter(db, h.key, h.windowStartedAt);
}
