import type { Kysely } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { DialectName } from '../../platform/db/dialect.ts';
import type { DB } from '../../platform/db/schema.ts';
import { countHits, dropHitsBefore, insertHit, lockWindow, pruneHits } from './sliding-window.queries.ts';

/** At most `limit` accepted requests in any `windowMs` ending now, counted under `key`. */
export interface SlidingWindow {
  key: string;
  limit: number;
  windowMs: number;
}

export type WindowResult = { ok: true } | { ok: false; retryAfterMs: number };

/** The longest window any caller uses (docs/api.md §22: `window_s` up to 86,400). */
export const LONGEST_WINDOW_MS = 86_400_000;

/**
 * An exact sliding window (docs/api.md §22, `rate_limit`), the attempt budget's sibling for limits
 * that must not reset at a fixed boundary: every accepted request is one row, and the check and the
 * count are one transaction serialized per key (an advisory lock on PostgreSQL, so every instance
 * sharing the database counts against the same rows; the one writer on SQLite). A refused request
 * counts nothing; its wait is the time until the oldest counted request leaves the window.
 */
export async function takeFromWindow(
  db: Kysely<DB>,
  dialect: DialectName,
  w: SlidingWindow,
): Promise<WindowResult> {
  return db.transaction().execute(async (trx) => {
    await lockWindow(trx, dialect, w.key);
    // Measured after the lock: a request that waited is judged at the time it is counted.
    const now = Date.now();
    await dropHitsBefore(trx, w.key, now - w.windowMs);
    const { n, oldest } = await countHits(trx, w.key);
    if (n >= w.limit) {
      return { ok: false, retryAfterMs: Math.max(1, (oldest ?? now) + w.windowMs - now) };
    }
    await insertHit(trx, { id: uuidv7(), key: w.key, at: now });
    return { ok: true };
  });
}

/** Deletes hits no window can still count (a job's housekeeping). */
export function pruneWindows(db: Kysely<DB>, now = Date.now()): Promise<number> {
  return pruneHits(db, now - LONGEST_WINDOW_MS);
}
