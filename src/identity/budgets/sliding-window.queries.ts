import { sql } from 'kysely';
import type { DialectName } from '../../platform/db/dialect.ts';
import type { Db } from '../../platform/db/schema.ts';

/*
 * The slots of exact sliding windows (./sliding-window.ts). Every statement here is one atomic
 * step on its own: no transaction is held across round trips, so a hundred requests for one key
 * never queue on a lock while holding pooled connections.
 */

/**
 * Takes a free slot (its last use at or before `freeBefore`) for `now`; the slot number, or null
 * when none is free. PostgreSQL: the free slot is locked and skipped by concurrent takers (SKIP
 * LOCKED), so each request gets its own; SQLite runs one statement at a time.
 */
export async function takeFreeSlot(
  db: Db,
  dialect: DialectName,
  key: string,
  freeBefore: number,
  now: number,
): Promise<number | null> {
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const result = await sql<{ slot: number }>`
    update rate_window_slots set at = ${now}
    where key = ${key} and slot = (
      select slot from rate_window_slots where key = ${key} and at <= ${freeBefore}
      order by at limit 1 ${lock})
    returning slot`.execute(db);
  return result.rows[0] === undefined ? null : Number(result.rows[0].slot);
}

/**
 * Makes the next slot (numbers are dense, 0 … limit − 1) and uses it at `now`: 'made'; 'full' when
 * `limit` slots exist; 'raced' when a concurrent call made that number first (try again).
 */
export async function makeSlot(
  db: Db,
  key: string,
  limit: number,
  now: number,
): Promise<'made' | 'full' | 'raced'> {
  const next = await db
    .selectFrom('rate_window_slots')
    .select((eb) => eb.fn.max<number | string | null>('slot').as('top'))
    .where('key', '=', key)
    .executeTakeFirst();
  const slot = next?.top == null ? 0 : Number(next.top) + 1;
  if (slot >= limit) return 'full';
  const made = await db
    .insertInto('rate_window_slots')
    .values({ key, slot, at: now })
    .onConflict((oc) => oc.columns(['key', 'slot']).doNothing())
    .executeTakeFirst();
  return Number(made.numInsertedOrUpdatedRows ?? 0) === 1 ? 'made' : 'raced';
}

/** The oldest use among a key's slots (when all are taken: the first to leave the window). */
export async function oldestUse(db: Db, key: string): Promise<number | null> {
  const row = await db
    .selectFrom('rate_window_slots')
    .select((eb) => eb.fn.min<number | string | null>('at').as('oldest'))
    .where('key', '=', key)
    .executeTakeFirst();
  return row?.oldest == null ? null : Number(row.oldest);
}

/**
 * Housekeeping: every window whose slots were all last used before `before` (idle for longer than
 * any window), whole, so the numbers of a window that stays stay dense.
 */
export async function pruneIdleWindows(db: Db, before: number): Promise<number> {
  const result = await sql`
    delete from rate_window_slots where key in (
      select key from rate_window_slots group by key having max(at) < ${before})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Every slot of one key (a key revoked). */
export async function dropWindow(db: Db, key: string): Promise<void> {
  await db.deleteFrom('rate_window_slots').where('key', '=', key).execute();
}
