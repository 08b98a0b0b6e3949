import type { Selectable, Transaction } from 'kysely';
import { dialectOf } from '../../platform/db/dialect.ts';
import type { DB, Db, InvitationsTable, UserRow } from '../../platform/db/schema.ts';

/** An invitation's own row: the role it grants and its inviter (its link holds the rest). */
export type InvitationRow = Selectable<InvitationsTable>;

/**
 * An invitation as its link page needs it: the link's address, expiry and marks, the invitation's
 * role and inviter, the invited user's name and status, the inviter's name.
 */
export interface InvitationWithUsers {
  id: string;
  user_id: string;
  email: string;
  role: InvitationRow['role'];
  expires_at: number;
  used_at: number | null;
  replaced_at: number | null;
  user_name: string;
  user_status: UserRow['status'];
  inviter_name: string | null;
}

/** The invitation whose link's token hashes to `tokenHash`, with its user and inviter. */
export function findInvitationByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<InvitationWithUsers | undefined> {
  return db
    .selectFrom('one_time_links as l')
    .innerJoin('invitations as i', 'i.id', 'l.id')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .leftJoin('users as inviter', 'inviter.id', 'i.invited_by')
    .select([
      'l.id',
      'l.user_id',
      'l.email',
      'i.role',
      'l.expires_at',
      'l.used_at',
      'l.replaced_at',
      'u.name as user_name',
      'u.status as user_status',
      'inviter.name as inviter_name',
    ])
    .where('l.token_hash', '=', tokenHash)
    .where('l.purpose', '=', 'invitation')
    .executeTakeFirst();
}

/**
 * The user with this email, locked for the rest of the transaction on PostgreSQL so that two
 * invitations of the same address one after the other cannot both stay pending. (SQLite runs one
 * write transaction at a time, which serializes them anyway.)
 */
export function findUserByEmailForUpdate(db: Transaction<DB>, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('email', '=', email)
    .$if(dialectOf(db) === 'postgres', (qb) => qb.forUpdate())
    .executeTakeFirst();
}

/** Writes what an invitation adds to its link (call it after issuing the link, same transaction). */
export async function insertInvitation(db: Db, row: InvitationRow): Promise<void> {
  await db.insertInto('invitations').values(row).execute();
}

/** The newest invitation of a user (its role and inviter carry over to a re-sent one). */
export function findLatestInvitation(db: Db, userId: string): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('one_time_links as l')
    .innerJoin('invitations as i', 'i.id', 'l.id')
    .select(['i.id', 'i.role', 'i.invited_by'])
    .where('l.user_id', '=', userId)
    .where('l.purpose', '=', 'invitation')
    .orderBy('l.created_at', 'desc')
    .orderBy('l.id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
