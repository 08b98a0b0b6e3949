import type { Kysely, Transaction } from 'kysely';
import type { DB, SessionRow } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** A session with the name of its OAuth client (null for sessions of `/api/v1/login`). */
export type ListedSession = SessionRow & { client_name: string | null };

/** The user's live sessions (not revoked, not expired), newest first. Read only: revocation lives in auth/. */
export async function listLiveSessions(db: Db, userId: string, now: number): Promise<ListedSession[]> {
  return db
    .selectFrom('sessions')
    .leftJoin('oauth_clients', 'oauth_clients.client_id', 'sessions.client_id')
    .selectAll('sessions')
    .select('oauth_clients.name as client_name')
    .where('sessions.user_id', '=', userId)
    .where('sessions.revoked_at', 'is', null)
    .where('sessions.expires_at', '>', now)
    .orderBy('sessions.created_at', 'desc')
    .orderBy('sessions.id', 'desc')
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
