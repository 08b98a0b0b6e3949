import type { Kysely, Transaction } from 'kysely';
import type { DB, SessionRow } from '../../db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** The user's live sessions (not revoked, not expired), newest first. Read only: revocation lives in auth/. */
export async function listLiveSessions(db: Db, userId: string, now: number): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** One live session of the user, or undefined (another user's session is as good as none). */
export async function findLiveSession(db: Db, userId: string, sessionId: string, now: number) {
  return db
    .selectFrom('sessions')
    .select(['id'])
    .where('id', '=', sessionId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}
