import assert from 'node:assert/strict';

/*
 * The JSON API of a Gatehouse started as a process (test/support/service-process.ts), as the suites
 * that drive it over real HTTP call it: a password login, and the admin API with an admin's token.
 * One copy for the relying-party interop harness and the conformance harness.
 */

/** POST /api/v1/login; the test fails unless it answers 200. Returns the access token. */
export async function loginOver(origin: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${origin}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { access_token: string }).access_token;
}

/** What an admin call answered: its status and its JSON body (`{}` when empty). */
export interface AdminAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** Calls the API with the admin's Bearer token, a JSON body when one is given. */
export function adminOver(
  origin: string,
  adminToken: string,
): (method: string, path: string, body?: unknown) => Promise<AdminAnswer> {
  return async (method, path, body) => {
    const res = await fetch(`${origin}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
}
