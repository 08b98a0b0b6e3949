import type { Db, NewUserRow, UserRow, UserUpdate } from '../../db/schema.ts';

/** One user by id. */
export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** One user by normalized email. */
export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
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
    last_login_at: row.last_login_at,
  };
}
