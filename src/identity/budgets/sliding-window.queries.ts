import { sql } from 'kysely';
import type { DialectName } from '../../platform/db/dialect.ts';
import type { Db } from '../../platform/db/schema.ts';

/**
 * Serializes every window operation on `key` until the transaction ends. PostgreSQL: a transaction
 * advisory lock on the key's hash (every instance sharing the database waits for it). SQLite has one
 * writer: the first statement of the window's transaction is a write, which takes the lock.
 */
export async function lockWindow(trx: Db, dialect: DialectName, key: string): Promise<void> {
  if (dialect === 'postgres')
    await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}

/** Forgets the hits of `key` that left the window (at or before `before`). */
export async function dropHitsBefore(trx: Db, key: string, before: number): Promise<void> {
  await trx.deleteFrom('rate_window_hits').where('key', '=', key).where('at', '<=', before).execute();
}

/** The hits of `key` still in the window, and the oldest of them. */
export async function countHits(trx: Db, key: string): Promise<{ n: number; oldest: number | null }> {
  const row = await trx
    .selectFrom('rate_window_hits')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('n'),
      eb.fn.min<number | string | null>('at').as('oldest'),
    ])
    .where('key', '=', key)
    .executeTakeFirst();
  return { n: Number(row?.n ?? 0), oldest: row?.oldest == null ? null : Number(row.oldest) };
}

/** Records one accepted request. */
export async function insertHit(trx: Db, hit: { id: string; key: string; at: number }): Promise<void> {
  await trx.insertInto('rate_window_hits').values(hit).execute();
}

/** Housekeeping: every hit older than `before`, whatever its key (the longest window is a day). */
export async function pruneHits(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('rate_window_hits').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Every hit of one key (a key revoked or its limit changed). */
export async function dropWindow(db: Db, key: string): Promise<void> {
  await db.deleteFrom('rate_window_hits').where('key', '=', key).execute();
}
