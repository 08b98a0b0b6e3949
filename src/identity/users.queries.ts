import { v7 as uuidv7 } from 'uuid';
import type { DialectName } from '../platform/db/dialect.ts';
import type {
  Db,
  NewUserRow,
  Role,
  UserKind,
  UserOrigin,
  UserRow,
  UserStatus,
  UserUpdate,
} from '../platform/db/schema.ts';

/** One user by id. */
export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** One user by normalized email. */
export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

/**
 * One user by id, its row locked until the transaction ends (PostgreSQL; SQLite's single writer
 * serialises whole transactions).
 */
export async function lockUserById(db: Db, id: string, dialect: DialectName): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('id', '=', id)
    .$if(dialect === 'postgres', (qb) => qb.forUpdate())
    .executeTakeFirst();
}

/** Whether any user (of `role`, when given) exists. */
export async function hasUser(db: Db, role?: Role): Promise<boolean> {
  let query = db.selectFrom('users').select('id');
  if (role !== undefined) query = query.where('role', '=', role);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
}

/**
 * A new user's row, made `now`: active, unverified, a `user` without a password unless `fields` say
 * otherwise. Every creating path names its origin (docs/api.md §16: it decides whether an unknown
 * provider identity may link to the account by e-mail).
 */
export function newUserRow(
  fields: {
    created_via: UserOrigin;
    email: string;
    name?: string;
    role?: Role;
    status?: UserStatus;
    password_hash?: string | null;
    email_verified?: number;
    kind?: UserKind;
    locale?: string | null;
  },
  now: number,
): UserRow {
  return {
    id: uuidv7(),
    email: fields.email,
    name: fields.name ?? '',
    role: fields.role ?? 'user',
    status: fields.status ?? 'active',
    password_hash: fields.password_hash ?? null,
    email_verified: fields.email_verified ?? 0,
    created_at: now,
    updated_at: now,
    last_login_at: null,
    created_via: fields.created_via,
    kind: fields.kind ?? 'person',
    locale: fields.locale ?? null,
  };
}

/** Inserts a user row. */
export async function insertUser(db: Db, row: NewUserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

/** Partial update of a user row; always bumps updated_at. */
export async function updateUser(db: Db, id: string, patch: UserUpdate): Promise<void> {
  await db
    .updateTable('users')
    .set({ ...patch, updated_at: patch.updated_at ?? Date.now() })
    .where('id', '=', id)
    .execute();
}

/** Inserts users, skipping every email already taken (by the API, another import); returns those inserted. */
export async function insertUsersSkippingTaken(db: Db, rows: NewUserRow[]) {
  return db
    .insertInto('users')
    .values(rows)
    .onConflict((oc) => oc.column('email').doNothing())
    .returning(['id', 'email', 'role', 'status'])
    .execute();
}

/** Which of these emails are already taken. */
export async function takenEmails(db: Db, emails: string[]): Promise<Set<string>> {
  const rows = await db.selectFrom('users').select('email').where('email', 'in', emails).execute();
  return new Set(rows.map((r) => r.email));
}

/** Users in (created_at, id) order, the page after `after` (from the start when null). */
export async function usersInCreationOrder(
  db: Db,
  after: { created_at: number; id: string } | null,
  limit: number,
): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll();
  if (after) {
    const { created_at, id } = after;
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', created_at),
        eb.and([eb('created_at', '=', created_at), eb('id', '>', id)]),
      ]),
    );
  }
  return query.orderBy('created_at').orderBy('id').limit(limit).execute();
}

/** Deletes a user; foreign keys cascade to what hangs on it. */
export async function deleteUserById(db: Db, id: string): Promise<void> {
  await db.deleteFrom('users').where('id', '=', id).execute();
}

/**
 * Locks every active admin row (PostgreSQL), in id order so concurrent callers cannot deadlock,
 * and returns their ids. Two concurrent demotions then run one after the other, and the second
 * sees the first's result. SQLite has a single writer, so the transaction alone serialises them.
 */
export async function lockActiveAdminIds(db: Db, dialect: DialectName): Promise<string[]> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('role', '=', 'admin')
    .where('status', '=', 'active')
    .orderBy('id')
    .$if(dialect === 'postgres', (qb) => qb.forUpdate())
    .execute();
  return rows.map((r) => r.id);
}

/** The key that signs list and search cursors, made by the users_scale migration. */
export async function readCursorKey(db: Db): Promise<string> {
  const row = await db
    .selectFrom('app_secrets')
    .select('value')
    .where('name', '=', 'cursor_key')
    .executeTakeFirstOrThrow();
  return row.value;
}

/** How many admins can still log in (last-admin protection). */
export async function countActiveAdmins(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('role', '=', 'admin')
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The user columns of a query that joins `users as u` to another table. */
export const JOINED_USER_COLUMNS = [
  'u.id',
  'u.email',
  'u.name',
  'u.role',
  'u.status',
  'u.password_hash',
  'u.email_verified',
  'u.created_at',
  'u.updated_at',
  'u.last_login_at',
  'u.created_via',
  'u.kind',
  'u.locale',
] as const;

/** The user fields of a joined row (selected with JOINED_USER_COLUMNS). */
export function pickUser(row: UserRow): UserRow {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    status: row.status,
    password_hash: row.password_hash,
    email_verified: row.email_verified,
    created_at: row.created_at,
    updated_at: row.updated_at,
    locale: row.locale,
    last_login_at: row.last_login_at,
    created_via: row.created_via,
    kind: row.kind,
  };
}
