import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.ts';
import { authHeaders, createUser, firstAdmin } from './users.ts';

/**
 * Calls an endpoint as the index writes it (`PUT /api/v1/users/<id>`) the way a client would find
 * it there: path parameters filled with real values (a throwaway user for `<id>`, so DELETE harms
 * nothing), a fresh admin session each time (so a logout ends only its own), and `{}` as the body.
 */
export async function callListed(t: TestApp, route: string): Promise<LightMyRequestResponse> {
  const [method, path] = route.split(' ') as [string, string];
  const user = path.includes('<id>') ? await createUser(t) : null;
  const url = path
    .replace('<id>', user?.id ?? '')
    .replace('<name>', 'account')
    .replace('<token>', 'a'.repeat(43));
  const headers: Record<string, string> = { ...(await authHeaders(t, await firstAdmin(t))) };
  const withBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
  if (withBody) headers['content-type'] = 'application/json';
  return t.app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(withBody ? { payload: '{}' } : {}),
  });
}

/** True when the response says no such endpoint is served here (a route missing or switched off). */
export function notServed(res: LightMyRequestResponse): boolean {
  if (res.statusCode === 405) return true;
  if (res.statusCode !== 404) return false;
  const body = JSON.parse(res.body) as { code?: string; detail?: string };
  // A served route may answer 404 not_found for an unknown resource (`No such passkey`); only the
  // router's own 404 (`No such endpoint`) or a switched-off module means the endpoint is not served.
  return (body.code === 'not_found' && body.detail === 'No such endpoint') || body.code === 'module_disabled';
}

/** Whether an endpoint answered with a module-disabled 404. */
export function isModuleDisabled(res: LightMyRequestResponse): boolean {
  return res.statusCode === 404 && (JSON.parse(res.body) as { code?: string }).code === 'module_disabled';
}
