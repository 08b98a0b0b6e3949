import type { LightMyRequestResponse } from 'fastify';
import { json, type TestApp } from '../helpers/app.ts';

export const FULL = { API_FORM: 'full' };

/** Creates a key through the API; returns the create answer. */
export async function makeKey(
  t: TestApp,
  headers: Record<string, string>,
  body: Record<string, unknown> = {},
): Promise<{ id: string; key: string; prefix: string } & Record<string, unknown>> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers,
    payload: { name: 'test key', ...body },
  });
  if (res.statusCode !== 201) throw new Error(`key create: ${res.statusCode} ${res.body}`);
  return json(res);
}

/** Bearer headers of a key. */
export const keyHeaders = (key: string) => ({ authorization: `Bearer ${key}` });

/** A problem+json answer's code, asserting its content type. */
export function problemCode(res: LightMyRequestResponse): string {
  if (!String(res.headers['content-type']).startsWith('application/problem+json')) {
    throw new Error(`not problem+json: ${res.statusCode} ${res.headers['content-type']} ${res.body}`);
  }
  return json<{ code: string }>(res).code;
}

/** How many rows the table has. */
export async function rowCount(
  t: TestApp,
  table: 'api_keys' | 'users' | 'rate_window_slots',
): Promise<number> {
  const row = await t.ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
