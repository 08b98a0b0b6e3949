import type { LightMyRequestResponse } from 'fastify';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import type { TestDialect } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

/** A `full` app (the organizations module on), with the first admin's headers. */
export async function orgApp(
  dialect: TestDialect,
  env: Record<string, string> = {},
): Promise<{ t: TestApp; admin: UserRow; adminHeaders: { authorization: string } }> {
  const t = await buildTestApp(dialect, { env: { API_FORM: 'full', ...env } });
  const admin = await firstAdmin(t);
  return { t, admin, adminHeaders: await authHeaders(t, admin) };
}

/** A user and their headers. */
export async function userWithHeaders(
  t: TestApp,
  fields: Parameters<typeof createUser>[1] = {},
): Promise<{ user: UserRow; headers: { authorization: string } }> {
  const user = await createUser(t, fields);
  return { user, headers: await authHeaders(t, user) };
}

/** Asserts a problem+json answer and returns its code. */
export function problem(res: LightMyRequestResponse): { status: number; code: string; type: string } {
  if (!String(res.headers['content-type']).startsWith('application/problem+json')) {
    throw new Error(`not problem+json: ${res.statusCode} ${res.headers['content-type']} ${res.body}`);
  }
  const body = json<{ code: string; type: string }>(res);
  return { status: res.statusCode, code: body.code, type: body.type };
}

/** Counts the rows of a table (what a refused request must leave unchanged). */
export async function count(
  t: TestApp,
  table:
    | 'roles'
    | 'user_roles'
    | 'organizations'
    | 'organization_members'
    | 'organization_member_roles'
    | 'organization_domains'
    | 'organization_departures'
    | 'audit_log',
): Promise<number> {
  const row = await t.ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
