import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_CODES } from '../../src/platform/error-codes.ts';
import type { TestApp } from './app.ts';

/**
 * True when the router has no such endpoint: the not-found handler's 404 ("No such endpoint") or a
 * 405 for a path known only under other methods. An endpoint that exists answers anything else,
 * its own 404s included (they carry another detail).
 */
export function isMissingEndpoint(res: LightMyRequestResponse): boolean {
  if (res.statusCode === 405) return true;
  if (res.statusCode !== 404) return false;
  try {
    return (JSON.parse(res.body) as { detail?: string }).detail === 'No such endpoint';
  } catch {
    return false;
  }
}

/**
 * Probes an endpoint with a harmless request (an empty JSON object for methods with a body, so a
 * present endpoint refuses it at validation and stores nothing) and tells whether it is missing.
 */
export async function endpointMissing(
  t: TestApp,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  headers: Record<string, string> = {},
): Promise<boolean> {
  const withBody = method === 'POST' || method === 'PUT';
  const res = await t.app.inject({
    method,
    url,
    headers: { ...headers, ...(withBody ? { 'content-type': 'application/json' } : {}) },
    ...(withBody ? { payload: '{}' } : {}),
  });
  return isMissingEndpoint(res);
}

/**
 * A digest of everything a refused request must leave untouched: row counts of the domain tables,
 * the users' rows, live sessions and unrotated refresh tokens, and the module switches. Audit
 * entries and throttle counters are left out on purpose: refused credentials are meant to be
 * counted and recorded.
 */
export async function domainState(t: TestApp): Promise<string> {
  const { db } = t.ctx;
  const count = async (table: 'sessions' | 'identities' | 'invitations' | 'outbox' | 'signing_keys') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const users = await db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'role', 'status', 'password_hash', 'updated_at', 'email_verified'])
    .orderBy('id')
    .execute();
  const liveSessions = await db
    .selectFrom('sessions')
    .select('id')
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .execute();
  const unrotated = await db
    .selectFrom('refresh_tokens')
    .select('id')
    .where('rotated_at', 'is', null)
    .orderBy('id')
    .execute();
  const modules = await db
    .selectFrom('module_overrides')
    .select(['name', 'enabled'])
    .orderBy('name')
    .execute();
  const state = {
    users,
    sessions: await count('sessions'),
    liveSessions: liveSessions.map((s) => s.id),
    unrotated: unrotated.map((r) => r.id),
    identities: await count('identities'),
    invitations: await count('invitations'),
    outbox: await count('outbox'),
    signingKeys: await count('signing_keys'),
    modules,
  };
  return createHash('sha256').update(JSON.stringify(state)).digest('hex');
}

// What a problem body must never show: driver errors, stack frames, file paths. (Input a detail
// echoes back, a module name with SQL in it say, is not a leak, so SQL words are not looked for.)
const LEAK = /SQLITE_|sqlite3|SqliteError|DatabaseError|relation "|\bat .+\.[jt]s:\d+|node_modules|"stack"/i;

/**
 * Checks an error response: the status, problem+json, a code from the closed table of docs/api.md §9
 * (one of `codes`), a matching `status` member and a request id, and no internals in the body.
 * Returns a description of what is wrong, or null.
 */
export function problemMismatch(
  res: LightMyRequestResponse,
  status: number,
  codes: readonly string[],
): string | null {
  const type = String(res.headers['content-type'] ?? '');
  if (res.statusCode !== status)
    return `status ${res.statusCode} (wanted ${status}): ${res.body.slice(0, 200)}`;
  if (!type.startsWith('application/problem+json')) return `content-type ${type}`;
  let body: { code?: string; status?: number; request_id?: string };
  try {
    body = JSON.parse(res.body) as typeof body;
  } catch {
    return `body is not JSON: ${res.body.slice(0, 100)}`;
  }
  if (!body.code || !(body.code in ERROR_CODES)) return `unknown code ${body.code}`;
  if (!codes.includes(body.code)) return `code ${body.code} (wanted ${codes.join(' or ')})`;
  if (body.status !== status) return `body status ${body.status}`;
  if (typeof body.request_id !== 'string') return 'no request_id';
  if (LEAK.test(res.body)) return `internals in the body: ${res.body.slice(0, 200)}`;
  return null;
}
