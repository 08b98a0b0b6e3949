import { sql } from 'kysely';
import type { Db } from '../../platform/db/schema.ts';

/** A counter row as stored: failures counted since `window_started_at`. */
export interface CounterRow {
  key: string;
  count: number;
  window_started_at: number;
}

/** Deletes one counter (a successful login clears its account's count). */
export async function deleteCounter(db: Db, key: string): Promise<void> {
  await db.deleteFrom('throttle_counters').where('key', '=', key).execute();
}

/**
 * Deletes counters whose window began before `before`, only those whose key starts with `prefix`
 * (each family of budgets has its own window: an hourly budget must not be pruned after 15 minutes);
 * returns how many went.
 */
export async function deleteCountersBefore(db: Db, before: number, prefix = ''): Promise<number> {
  const result = await db
    .deleteFrom('throttle_counters')
    .where('window_started_at', '<', before)
    .$if(prefix !== '', (qb) => qb.where('key', 'like', `${prefix}%`))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A counter after a successful reservation. */
export interface ReservedRow {
  key: string;
  count: number;
  window_started_at: number;
}

/**
 * Counts one attempt against `key` only while its budget has room: one conditional upsert, so the
 * check and the count are a single atomic step in the database. A fresh or run-out window starts at
 * count 1; a live window below `limit` grows by one; a spent window is left untouched and no row is
 * returned. On PostgreSQL the conflicting row is locked for the update, so concurrent reservations
 * from any number of instances are serialized per key and never exceed the limit.
 */
export async function reserveCounter(
  db: Db,
  c: { key: string; limit: number; windowMs: number },
  now: number,
): Promise<ReservedRow | undefined> {
  const at = sql<number>`cast(${now} as bigint)`;
  const expired = sql<boolean>`throttle_counters.window_started_at + cast(${c.windowMs} as bigint) <= ${at}`;
  return db
    .insertInto('throttle_counters')
    .values({ key: c.key, count: 1, window_started_at: now })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({
          count: sql<number>`case when ${expired} then 1 else throttle_counters.count + 1 end`,
          window_started_at: sql<number>`case when ${expired} then ${at} else throttle_counters.window_started_at end`,
        })
        .where(sql<boolean>`${expired} or throttle_counters.count < cast(${c.limit} as bigint)`),
    )
    .returning(['key', 'count', 'window_started_at'])
    .executeTakeFirst();
}

/** Gives back one reserved attempt of the window that started at `windowStartedAt` (never below zero). */
export async function releaseCounter(db: Db, key: string, windowStartedAt: number): Promise<void> {
  await db
    .updateTable('throttle_counters')
    .set({ count: sql<number>`case when count > 0 then count - 1 else 0 end` })
    .where('key', '=', key)
    .where('window_started_at', '=', windowStartedAt)
    .execute();
}

/** One counter as stored, or undefined. */
export async function readCounter(db: Db, key: string): Promise<CounterRow | undefined> {
  return db
    .selectFrom('throttle_counters')
    .select(['key', 'count', 'window_started_at'])
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Deletes every counter whose key starts with `prefix` (an admin unlocking an account). */
export async function deleteCountersByPrefix(db: Db, prefix: string): Promise<number> {
  const escaped = prefix.replace(/[\\%_]/g, (ch) => `\\${ch}`);
  const result = await db
    .deleteFrom('throttle_counters')
    .where(sql<boolean>`key like ${`${escaped}%`} escape '\\'`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
