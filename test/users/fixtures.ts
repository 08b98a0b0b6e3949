import { v7 as uuidv7 } from 'uuid';
import type { Role, UserRow, UserStatus } from '../../src/platform/db/schema.ts';
import type { TestApp } from '../helpers/app.ts';

export const DAY = 86_400_000;

export interface UserSpec {
  email: string;
  name?: string;
  role?: Role;
  status?: UserStatus;
  created_at?: number;
  last_login_at?: number | null;
}

/** Inserts users in one statement (fields as given; ids are UUIDv7 of created_at). */
export async function insertUsers(t: TestApp, specs: UserSpec[]): Promise<UserRow[]> {
  const now = Date.now();
  const rows: UserRow[] = specs.map((s) => {
    const created = s.created_at ?? now;
    return {
      id: uuidv7({ msecs: created }),
      email: s.email,
      name: s.name ?? '',
      role: s.role ?? 'user',
      status: s.status ?? 'active',
      password_hash: null,
      email_verified: 1,
      created_at: created,
      updated_at: created,
      last_login_at: s.last_login_at ?? null,
      created_via: 'admin',
    };
  });
  for (let i = 0; i < rows.length; i += 500) {
    await t.ctx.db
      .insertInto('users')
      .values(rows.slice(i, i + 500))
      .execute();
  }
  return rows;
}

/** Every user row, straight from the database. */
export function allUsers(t: TestApp): Promise<UserRow[]> {
  return t.ctx.db.selectFrom('users').selectAll().execute();
}

/** Byte order of UTF-8 strings (what SQLite and PostgreSQL's "C" collation compare). */
export function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
