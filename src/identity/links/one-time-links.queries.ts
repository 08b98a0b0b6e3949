import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB, LinkPurpose, OneTimeLinksTable, UserRow } from '../../platform/db/schema.ts';
import { JOINED_USER_COLUMNS, pickUser } from '../users.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export type LinkRow = Selectable<OneTimeLinksTable>;

/** Inserts a link row. */
export async function insertLink(db: Db, row: LinkRow): Promise<void> {
  await db.insertInto('one_time_links').values(row).execute();
}

/** Marks the user's still-usable links of these purposes as replaced; returns how many. */
export async function replaceLiveLinks(
  db: Db,
  userId: string,
  purposes: readonly LinkPurpose[],
  now: number,
): Promise<number> {
  const result = await db
    .updateTable('one_time_links')
    .set({ replaced_at: now })
    .where('user_id', '=', userId)
    .where('purpose', 'in', purposes)
    .where('used_at', 'is', null)
    .where('replaced_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The link whose token hashes to `tokenHash`, with its user (any state: the caller decides). */
export async function findLinkByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<{ link: LinkRow; user: UserRow } | undefined> {
  const row = await db
    .selectFrom('one_time_links as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .select([
      'l.id as link_id',
      'l.user_id as link_user_id',
      'l.purpose',
      'l.token_hash',
      'l.email as link_email',
      'l.created_at as link_created_at',
      'l.expires_at',
      'l.used_at',
      'l.replaced_at',
      'l.code_hash',
      'l.code_tries',
      ...JOINED_USER_COLUMNS,
    ])
    .where('l.token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    link: {
      id: row.link_id,
      user_id: row.link_user_id,
      purpose: row.purpose,
      token_hash: row.token_hash,
      email: row.link_email,
      created_at: row.link_created_at,
      expires_at: row.expires_at,
      used_at: row.used_at,
      replaced_at: row.replaced_at,
      code_hash: row.code_hash,
      code_tries: row.code_tries,
    },
    user: pickUser(row),
  };
}

/**
 * Uses a link up if, and only if, it is still usable at `now`: the whole condition is in the one
 * UPDATE, so of two concurrent uses exactly one changes the row (PostgreSQL re-checks the WHERE
 * after waiting for the other's row lock; SQLite serializes writers). True when this call won.
 */
export async function consumeLinkRow(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('one_time_links')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('replaced_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The user's live link of a purpose at `now` (at most one: issuing replaces), or undefined. */
export async function findLiveLinkOfUser(
  db: Db,
  userId: string,
  purpose: LinkPurpose,
  now: number,
): Promise<LinkRow | undefined> {
  return db
    .selectFrom('one_time_links')
    .selectAll()
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('replaced_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Reserves one try of a link's code: one conditional write that counts it only while the link is
 * live and has tries left, so N parallel guesses get at most `maxTries` counted (PostgreSQL re-checks
 * the WHERE after waiting for the row lock; SQLite serializes writers). Returns the try's number
 * (1-based), or null when none was left.
 */
export async function reserveCodeTryRow(
  db: Db,
  id: string,
  maxTries: number,
  now: number,
): Promise<number | null> {
  const row = await db
    .updateTable('one_time_links')
    .set((eb) => ({ code_tries: eb('code_tries', '+', 1) }))
    .where('id', '=', id)
    .where('code_tries', '<', maxTries)
    .where('used_at', 'is', null)
    .where('replaced_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('code_tries')
    .executeTakeFirst();
  return row ? Number(row.code_tries) : null;
}

/** Ends one live link (marked replaced); true when it was still live. */
export async function endLinkRow(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('one_time_links')
    .set({ replaced_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('replaced_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Deletes links that expired before `before` (housekeeping; used ones are kept until then).
 * Invitation links stay, as invitations always did (docs/invitations.md): an old invitation link
 * answers 410 `invitation_expired` or `invitation_used`, never 404, and the newest one hands its role
 * and inviter to a re-sent invitation. They go with their user.
 */
export async function deleteLinksExpiredBefore(db: Db, before: number): Promise<number> {
  const result = await db
    .deleteFrom('one_time_links')
    .where('expires_at', '<', before)
    .where('purpose', '!=', 'invitation')
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
