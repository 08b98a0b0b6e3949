import assert from 'node:assert/strict';
import { json, type TestApp } from '../helpers/app.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

/** Env of a test app with webhooks on and local receivers allowed (docs/webhooks.md, tests). */
export const WEBHOOK_ENV = { API_FORM: 'full', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };

export interface DeliveryItem {
  id: string;
  event_id: string;
  type: string;
  attempt: number;
  status: 'pending' | 'delivered' | 'failed';
  response_code: number | null;
  error: string | null;
  duration_ms: number | null;
  created_at: string;
  next_attempt_at: string | null;
}

/** The first admin's Authorization header. */
export async function adminHeaders(t: TestApp): Promise<{ authorization: string }> {
  return authHeaders(t, await firstAdmin(t));
}

/** POST /api/v1/webhooks; returns the endpoint with its secret. */
export async function createEndpoint(
  t: TestApp,
  headers: { authorization: string },
  url: string,
  events: string[] = ['*'],
): Promise<{ id: string; secret: string; events: string[] }> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers,
    payload: { url, events },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

/** The delivery log of an endpoint, newest first. */
export async function deliveries(
  t: TestApp,
  headers: { authorization: string },
  id: string,
): Promise<DeliveryItem[]> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/webhooks/${id}/deliveries?limit=100`,
    headers,
  });
  assert.equal(res.statusCode, 200, res.body);
  return json<{ data: DeliveryItem[] }>(res).data;
}

/** Waits until the delivery log satisfies a condition (the worker runs on its own timer). */
export async function waitForLog(
  t: TestApp,
  headers: { authorization: string },
  id: string,
  predicate: (log: DeliveryItem[]) => boolean,
  timeoutMs = 15_000,
): Promise<DeliveryItem[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const log = await deliveries(t, headers, id);
    if (predicate(log)) return log;
    if (Date.now() > until) throw new Error(`delivery log condition not met: ${JSON.stringify(log)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Moves every planned attempt to now: the schedule is data, so tests never wait for a back-off. */
export async function makeDueNow(t: TestApp): Promise<void> {
  await t.ctx.db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: Date.now() })
    .where('status', '=', 'pending')
    .execute();
}
