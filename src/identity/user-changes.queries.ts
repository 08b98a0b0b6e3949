import type { Db } from '../platform/db/schema.ts';

/*
 * The named changes of a users row. `users` belongs to the identity core (src/platform/db/
 * table-owners.ts): a feature changes an account through one of these (or insertUser, updateUser,
 * deleteUserById, recordLogin), never with SQL of its own, so each change is written once and
 * `npm run deps` refuses a second copy anywhere else.
 */

/** Stores a new password hash (a password change, a generated password). */
export async function setPasswordHash(db: Db, userId: string, hash: string, at: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: hash, updated_at: at })
    .where('id', '=', userId)
    .execute();
}

/**
 * The mailbox at `email` is proven (docs/api.md §11, §16, §20): a verification link, an e-mail
 * sign-in, a password reset. `email_verified` becomes true, only while the account is still active
 * at the address the link or code was sent to; a reset sets its new password hash in the same
 * statement. `updated_at` moves when the row changes: not for a sign-in by an address already
 * proven. True when the account was active at that address.
 */
export async function proveMailbox(
  db: Db,
  userId: string,
  email: string,
  now: number,
  passwordHash?: string,
): Promise<boolean> {
  const query = db.updateTable('users');
  const result = await (passwordHash === undefined
    ? query.set((eb) => ({
        email_verified: 1,
        updated_at: eb.case().when('email_verified', '=', 1).then(eb.ref('updated_at')).else(now).end(),
      }))
    : query.set({ password_hash: passwordHash, email_verified: 1, updated_at: now })
  )
    .where('id', '=', userId)
    .where('email', '=', email)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Switches an active account to a proven new address (verified by the link that proved it); true
 * when the account was active. A taken address fails on the unique index (the caller maps it).
 */
export async function switchEmail(db: Db, userId: string, email: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ email, email_verified: 1, updated_at: now })
    .where('id', '=', userId)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Activates an invited user with a password (the invitation's link proved the mailbox); true when
 * the user was still `invited`.
 */
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
