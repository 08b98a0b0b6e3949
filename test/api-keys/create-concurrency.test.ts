import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { FULL } from './helpers.ts';

// Regression: ~100 parallel key creations for one owner on PostgreSQL held every pooled connection
// in a transaction waiting for the owner's advisory lock, so the pool's other callers (the
// creations queued behind them, any other request) waited for a connection until its timeout.
for (const dialect of DIALECTS) {
  describe(`api keys: parallel creations for one owner [${dialect}]`, () => {
    let t: TestApp;
    let admin: Record<string, string>;
    before(async () => {
      // A small pool makes the hold visible at once; the default 10 only needs more creations.
      t = await buildTestApp(dialect, { env: { ...FULL, DATABASE_POOL_MAX: '3' } });
      admin = await authHeaders(t, await firstAdmin(t));
    });
    after(() => t.destroy());

    it('100 at once: each created, the 101st refused key_limit, and other requests are served meanwhile', async () => {
      let finished = 0;
      const create = async (i: number) => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/api-keys',
          headers: admin,
          payload: { name: `k${i}` },
        });
        finished++;
        return res;
      };
      const burst = Promise.all(Array.from({ length: 100 }, (_, i) => create(i)));
      // A read sent once the burst is under way: it needs a pooled connection too. Held by
      // creations waiting for one another, the pool served it only after nearly all of them
      // (its queue is first come, first served); taking turns before the pool, it is served at once.
      await new Promise((r) => setImmediate(r));
      const other = await t.app.inject({ method: 'GET', url: '/api/v1/users?limit=1', headers: admin });
      const finishedBeforeOther = finished;
      const answers = await burst;
      assert.equal(other.statusCode, 200, other.body);
      assert.ok(finishedBeforeOther < 50, `the read waited for ${finishedBeforeOther} of 100 creations`);
      assert.deepEqual(
        answers.map((r) => r.statusCode).filter((s) => s !== 201),
        [],
        answers.find((r) => r.statusCode !== 201)?.body,
      );
      const over = await create(100);
      assert.equal(over.statusCode, 409);
      assert.equal(json<{ code: string }>(over).code, 'key_limit');
    });
  });
}
