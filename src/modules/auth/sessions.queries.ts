import type { Db, SessionRow, UserRow } from '../../db/schema.ts';

/** A session and its user, as the guard checks them. */
export interface SessionWithUser {
  session: SessionRow;
  user: UserRow;
}

/**
 * A session with its user; null when either is gone. Two primary-key reads rather than a join, so
 * every column either table gains reaches the guard without a column list to keep in step.
 */
export async function findSessionWithUser(db: Db, sessionId: string): Promise<SessionWithUser | null> {
  const session = await db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
  if (!session) return null;
  const user = await db.selectFrom('users').selectAll().where('id', '=', session.user_id).executeTakeFirst();
  return user ? { session, user } : null;
}

/** Stores a new session. */
export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}
