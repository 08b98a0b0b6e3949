import assert from 'node:assert/strict';
import { v7 as uuidv7 } from 'uuid';
import type { Role, UserRow, UserStatus } from '../../src/platform/db/schema.ts';
import { json, type TestApp } from '../helpers/app.ts';

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
      kind: 'person',
      locale: null,
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

/** Every page of a list or search (`path` holds its query string): the emails in order, the first `total`. */
export async function everyPage(
  t: TestApp,
  headers: { authorization: string },
  path: string,
): Promise<{ emails: string[]; total: number }> {
  type Page = { data: Array<{ email: string }>; next_cursor: string | null; total: number };
  const emails: string[] = [];
  let cursor: string | null = null;
  let total = -1;
  do {
    const url: string = `${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await t.app.inject({ url, headers });
    assert.equal(res.statusCode, 200, res.body);
    const p = json<Page>(res);
    if (total < 0) total = p.total;
    emails.push(...p.data.map((u) => u.email));
    cursor = p.next_cursor;
  } while (cursor);
  return { emails, total };
}
