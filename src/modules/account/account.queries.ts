import type { Db } from '../../db/schema.ts';

/** A user's linked external identities, oldest first. */
export function listIdentities(
  db: Db,
  userId: string,
): Promise<Array<{ issuer: string; subject: string; linked_at: number }>> {
  return db
    .selectFrom('identities')
    .select(['issuer', 'subject', 'linked_at'])
    .where('user_id', '=', userId)
    .orderBy('linked_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/** A user's sessions that can still be used (not revoked, not expired), newest first. */
export function listLiveSessions(
  db: Db,
  userId: string,
  now: number,
): Promise<Array<{ id: string; created_at: number; last_used_at: number }>> {
  return db
    .selectFrom('sessions')
    .select(['id', 'created_at', 'last_used_at'])
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Stores a new password hash. */
export async function setPasswordHash(db: Db, userId: string, hash: string, at: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: hash, updated_at: at })
    .where('id', '=', userId)
    .execute();
}
