import type { Db } from '../../platform/db/schema.ts';

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
