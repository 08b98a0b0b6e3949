import type { Db } from '../platform/db/schema.ts';

/** How many live sessions (not revoked, not expired) the user holds. */
export async function countUserLiveSessions(db: Db, userId: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The user's `count` oldest live sessions, oldest first (by opening, then id). */
export async function oldestUserLiveSessions(
  db: Db,
  userId: string,
  now: number,
  count: number,
): Promise<Array<{ id: string }>> {
  return db
    .selectFrom('sessions')
    .select('id')
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .limit(count)
    .execute();
}
