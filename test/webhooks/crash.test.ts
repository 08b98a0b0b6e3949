import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, TEST_SECRETS_KEY } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { freePort, type ServiceProcess, startServiceProcess } from '../support/service-process.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const EVENTS = 5;

for (const dialect of DIALECTS) {
  describe(`webhooks survive a SIGKILL mid-delivery [${dialect}]`, () => {
    let db: TestDatabase;
    let proc: ServiceProcess | null = null;
    let rx: Receiver | null = null;
    after(async () => {
      await proc?.stop();
      await rx?.close();
      await db?.drop();
    });

    it('every event committed before the kill arrives at least once after the restart (dedup by webhook-id)', async () => {
      db = await createTestDatabase(dialect);
      rx = await startReceiver();
      const port = await freePort();
      const env = {
        DATABASE_URL: db.url,
        PUBLIC_URL: `http://localhost:${port}`,
        ADMIN_EMAIL,
        ADMIN_PASSWORD,
        API_FORM: 'full',
        SECRETS_KEY: TEST_SECRETS_KEY,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        LOG_LEVEL: 'warn',
      };
      // Up to 90 s to come up: the machine running the suite may be loaded (a start, not a delivery, bound).
      proc = await startServiceProcess(env, 900, port);
      const call = async (method: string, path: string, body?: unknown, token?: string) => {
        const res = await fetch(`${proc?.url}${path}`, {
          method,
          headers: {
            ...(body !== undefined && { 'content-type': 'application/json' }),
            ...(token && { authorization: `Bearer ${token}` }),
          },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
        return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
      };
      const login = await call('POST', '/api/v1/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
      const token = String(login.body.access_token);
      const hook = await call('POST', '/api/v1/webhooks', { url: rx.url, events: ['user.created'] }, token);
      assert.equal(hook.status, 201);
      rx.secrets = [String(hook.body.secret)];

      // The receiver holds its answers: the first delivery is in flight when the process dies.
      rx.hold();
      const emails = Array.from({ length: EVENTS }, (_, i) => `crash-${i}@example.com`);
      for (const email of emails)
        assert.equal((await call('POST', '/api/v1/users', { email }, token)).status, 201);
      await rx.waitFor(() => (rx?.arrivals.length ?? 0) >= 1);
      await proc.kill();
      rx.release();

      proc = await startServiceProcess(env, 900, port);
      const emailsSeen = () =>
        new Set(
          (rx?.received ?? [])
            .filter((r) => r.verifiedBy.length === 1)
            .map((r) => (r.body.data as { user: { email: string } }).user.email),
        );
      await rx.waitFor(() => emails.every((e) => emailsSeen().has(e)), 30_000);

      // The log agrees: each event delivered, and every attempt of one event carried its one id.
      // The attempts in flight at the kill were never answered, so only the restarted process can
      // mark them delivered: it does once their lease has run out, which may come after the
      // receiver saw every event (all of them can arrive before the kill). Wait for the log.
      const again = await call('POST', '/api/v1/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
      const deliveredEvents = async () => {
        const log = await call(
          'GET',
          `/api/v1/webhooks/${hook.body.id}/deliveries?limit=100`,
          undefined,
          String(again.body.access_token),
        );
        const rows = log.body.data as Array<{ event_id: string; status: string }>;
        return new Set(rows.filter((r) => r.status === 'delivered').map((r) => r.event_id));
      };
      let delivered = await deliveredEvents();
      for (let i = 0; i < 600 && delivered.size < EVENTS; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        delivered = await deliveredEvents();
      }
      assert.equal(delivered.size, EVENTS);
      const ids = new Set(rx.received.map((r) => r.id));
      assert.equal(ids.size, EVENTS);
      for (const id of delivered) assert.ok(ids.has(id));
    });
  });
}
