import { type RawBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import type { Db, IdentitiesTable } from '../platform/db/schema.ts';

/*
 * The one query file of the `identities` table: an external provider's (issuer, subject) linked to
 * an account. Every feature that reads or writes a linked identity (the ID-token sign-in and the
 * providers' flows, the operator's `users link-identity`, the profile, the console, the switches
 * that count who could still sign in) goes through these functions.
 */

export type IdentityRow = Selectable<IdentitiesTable>;

/** The identity of (issuer, subject), whoever holds it. */
export function findIdentity(db: Db, issuer: string, subject: string): Promise<IdentityRow | undefined> {
  return db
    .selectFrom('identities')
    .selectAll()
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

/** A user's linked identities, oldest first. */
export function listIdentities(db: Db, userId: string): Promise<IdentityRow[]> {
  return db
    .selectFrom('identities')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('linked_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/** Whether any provider identity is linked to the user. */
export async function hasIdentities(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('identities')
    .select('id')
    .where('user_id', '=', userId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** How many identities are linked to the user. */
export async function countIdentities(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('identities')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Links an identity to a user; fails with a unique violation when (issuer, subject) is already linked. */
export async function insertIdentity(db: Db, row: IdentityRow): Promise<void> {
  await db.insertInto('identities').values(row).execute();
}

/** Records the email the provider last reported for an identity. */
export async function updateIdentityEmail(db: Db, id: string, email: string | null): Promise<void> {
  await db.updateTable('identities').set({ email }).where('id', '=', id).execute();
}

/** Removes one of the user's identities; false when the user has none of that id. */
export async function deleteIdentity(db: Db, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('identities')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * `exists (an identity linked to the account in column userIdColumn, of `issuer` when given)`, for
 * another query's where clause (the counts of accounts that could still sign in another way), so
 * that those queries too read `identities` here. `userIdColumn` is a column name written in code
 * (`'users.id'`, `'u.id'`), never a value from a request.
 */
export function identityLinked(userIdColumn: string, issuer?: string): RawBuilder<SqlBool> {
  const ofIssuer = issuer === undefined ? sql`` : sql` and identities.issuer = ${issuer}`;
  return sql<SqlBool>`exists (select 1 from identities where identities.user_id = ${sql.ref(userIdColumn)}${ofIssuer})`;
}
