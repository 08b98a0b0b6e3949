import { v7 as uuidv7 } from 'uuid';
import { insertUser, PASSWORD_LOGIN, type TokenResponse } from '../../src/identity/index.ts';
import { openSession } from '../../src/identity/sessions.ts';
import type { Role, UserOrigin, UserRow, UserStatus } from '../../src/platform/db/schema.ts';
import type { TestApp } from './app.ts';
import { ADMIN_EMAIL } from './app.ts';

/** Inserts a user directly (fast: no HTTP, and a password hash only when a password is given). */
export async function createUser(
  t: TestApp,
  fields: {
    email?: string;
    name?: string;
    role?: Role;
    status?: UserStatus;
    password?: string;
    /** Default `admin`: as an admin's POST /api/v1/users would make it. */
    created_via?: UserOrigin;
  } = {},
): Promise<UserRow> {
  const now = Date.now();
  const row: UserRow = {
    id: uuidv7(),
    email: fields.email ?? `user-${uuidv7()}@example.com`,
    name: fields.name ?? 'Test User',
    role: fields.role ?? 'user',
    status: fields.status ?? 'active',
    password_hash: fields.password ? await t.ctx.passwords.hash(fields.password) : null,
    email_verified: 1,
    created_at: now,
    updated_at: now,
    last_login_at: null,
    created_via: fields.created_via ?? 'admin',
    kind: 'person',
    locale: null,
  };
  await insertUser(t.ctx.db, row);
  return row;
}

/** Opens a session for a user without going through login; returns the token response. */
export function sessionFor(t: TestApp, user: UserRow): Promise<TokenResponse> {
  return openSession(t.ctx, user, { ip: '127.0.0.1', userAgent: 'test' }, PASSWORD_LOGIN);
}

/** Authorization headers for a user. */
export async function authHeaders(t: TestApp, user: UserRow): Promise<{ authorization: string }> {
  const { access_token } = await sessionFor(t, user);
  return { authorization: `Bearer ${access_token}` };
}

/** The first admin created at start (ADMIN_EMAIL). */
export async function firstAdmin(t: TestApp): Promise<UserRow> {
  return t.ctx.db.selectFrom('users').selectAll().where('email', '=', ADMIN_EMAIL).executeTakeFirstOrThrow();
}
