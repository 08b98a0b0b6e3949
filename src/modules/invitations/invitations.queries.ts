import type { Selectable, Transaction } from 'kysely';
import { dialectOf } from '../../db/dialect.ts';
import type { DB, Db, InvitationsTable, UserRow } from '../../db/schema.ts';

export type InvitationRow = Selectable<InvitationsTable>;

/** An invitation with what its link page shows: the invited user's name and status, the inviter's name. */
export interface InvitationWithUsers extends InvitationRow {
  user_name: string;
  user_status: UserRow['status'];
  inviter_name: string | null;
}

/** The invitation whose token hashes to `tokenHash`, with its user and inviter. */
export function findInvitationByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<InvitationWithUsers | undefined> {
  return db
    .selectFrom('invitations as i')
    .innerJoin('users as u', 'u.id', 'i.user_id')
    .leftJoin('users as inviter', 'inviter.id', 'i.invited_by')
    .selectAll('i')
    .select(['u.name as user_name', 'u.status as user_status', 'inviter.name as inviter_name'])
    .where('i.token_hash', '=', tokenHash)
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

/** Marks every still-usable invitation of a user as replaced; returns how many. */
export async function replacePendingInvitations(db: Db, userId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('invitations')
    .set({ replaced_at: now })
    .where('user_id', '=', userId)
    .where('consumed_at', 'is', null)
    .where('replaced_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Inserts an invitation row. */
export async function insertInvitation(db: Db, row: InvitationRow): Promise<void> {
  await db.insertInto('invitations').values(row).execute();
}

/**
 * Consumes an invitation if, and only if, it is still usable at `now`. The condition is in the
 * update itself, so of two concurrent accepts exactly one changes the row (PostgreSQL re-checks it
 * after waiting for the other's row lock; SQLite serializes writers). True when this call won.
 */
export async function consumeInvitation(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ consumed_at: now })
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .where('replaced_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Activates an invited user with a password; true when the user was still `invited`. */
export async function activateInvitedUser(
  db: Db,
  userId: string,
  passwordHash: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ status: 'active', password_hash: passwordHash, email_verified: 1, updated_at: now })
    .where('id', '=', userId)
    .where('status', '=', 'invited')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The newest invitation of a user (its role and inviter carry over to a re-sent one). */
export function findLatestInvitation(db: Db, userId: string): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
