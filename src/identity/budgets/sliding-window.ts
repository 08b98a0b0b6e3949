import type { Kysely } from 'kysely';
import type { DialectName } from '../../platform/db/dialect.ts';
import type { DB } from '../../platform/db/schema.ts';
import { makeSlot, oldestUse, pruneIdleWindows, takeFreeSlot } from './sliding-window.queries.ts';

/** At most `limit` accepted requests in any `windowMs` ending now, counted under `key`. */
export interface SlidingWindow {
  key: string;
  limit: number;
  windowMs: number;
}

export type WindowResult = { ok: true } | { ok: false; retryAfterMs: number };

/** The longest window any caller uses (docs/api.md §22: `window_s` up to 86,400). */
export const LONGEST_WINDOW_MS = 86_400_000;
/** Concurrent first fills of one window may race for a slot number; each round one of them wins. */
const MAX_ROUNDS = 1000;

/**
 * An exact sliding window (docs/api.md §22, `rate_limit`), the attempt budget's sibling for limits
 * that must not reset at a fixed boundary. A window of `limit` requests has `limit` slots, each
 * holding the time of its last use; a request takes a slot whose last use has left the window
 * (one conditional write, like the attempt budget's reservation), else makes one while fewer than
 * `limit` exist. So at most `limit` requests were accepted in any window (each slot was used at
 * most once in it), and a refusal means exactly `limit` were: every slot's last use is inside it.
 * A refused request counts nothing; its wait is the time until the oldest slot's use leaves the
 * window. Exact across every instance sharing the database: the writes are single statements
 * (PostgreSQL: row locks with SKIP LOCKED; SQLite: one writer).
 */
export async function takeFromWindow(
  db: Kysely<DB>,
  dialect: DialectName,
  w: SlidingWindow,
): Promise<WindowResult> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const now = Date.now();
    if ((await takeFreeSlot(db, dialect, w.key, now - w.windowMs, now)) !== null) return { ok: true };
    const made = await makeSlot(db, w.key, w.limit, now);
    if (made === 'made') return { ok: true };
    if (made === 'full') {
      // A slot freed between the two statements is taken on the next round.
      const oldest = await oldestUse(db, w.key);
      const wait = (oldest ?? now) + w.windowMs - now;
      if (wait > 0) return { ok: false, retryAfterMs: wait };
    }
  }
  throw new Error('sliding window: no slot after many rounds');
}

/** Deletes windows no request can still count against (a job's housekeeping). */
export function pruneWindows(db: Kysely<DB>, now = Date.now()): Promise<number> {
  return pruneIdleWindows(db, now - LONGEST_WINDOW_MS);
}
