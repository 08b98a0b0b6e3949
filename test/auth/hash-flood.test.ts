import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';

/*
 * The password-hash queue under a flood (docs/auth.md, src/identity/passwords/passwords.ts;
 * docs/security.md Round 3): the queue is bounded, the excess is refused with 503 `unavailable`
 * and Retry-After while the hashing is still busy (so it cannot pile up behind it), liveness
 * (/health) answers throughout, and another person's sign-in completes. Order and counts decide,
 * never the clock.
 */

const PASSWORD = 'a long and unusual passphrase 9';
const FLOOD = 30;
const QUEUE = 2;

for (const dialect of DIALECTS) {
  describe(`password-hash queue under a flood [${dialect}]`, () => {
    let t: TestApp;
    let next = 0;
    const ip = () => `10.88.${(++next >> 8) & 255}.${next & 255}`;
    const login = (email: string, password: string, remoteAddress = ip()) =>
      t.app.inject({ method: 'POST', url: '/api/v1/login', payload: { email, password }, remoteAddress });

    before(async () => {
      t = await buildTestApp(dialect, {
        env: { PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: String(QUEUE) },
      });
    });
    after(() => t?.destroy());

    it('hash-queue-flood-bounded: the excess answers 503 while the slot is busy; /health stays 200', async () => {
      // The only slot held until every refusal has been answered: the refusals cannot have waited
      // for the hashing, or this test would never get past them.
      let release = () => {};
      const holder = t.ctx.passwords.run(() => new Promise<void>((resolve) => (release = resolve)));
      const rejectedBefore = t.ctx.passwords.stats().rejected;
      const settled: LightMyRequestResponse[] = [];
      const flood = Array.from({ length: FLOOD }, (_, i) =>
        login(`flood-${i}@example.com`, 'a wrong password 1').then((res) => {
          settled.push(res);
          return res;
        }),
      );
      try {
        // Every request beyond the queue is answered while the slot is still held (a loop guard, not
        // a clock: if they waited for the hashing, they would never arrive and the test would fail).
        for (let round = 0; settled.length < FLOOD - QUEUE && round < 1000; round++)
          await new Promise((r) => setTimeout(r, 10));
        assert.equal(settled.length, FLOOD - QUEUE, 'every request beyond the queue was answered at once');
        for (const res of settled) {
          assert.equal(res.statusCode, 503, res.body);
          assert.equal(json(res).code, 'unavailable');
          assert.equal(res.headers['retry-after'], '1');
        }
        const stats = t.ctx.passwords.stats();
        assert.equal(stats.queued, QUEUE);
        assert.equal(stats.rejected, rejectedBefore + FLOOD - QUEUE);
        // Liveness and readiness never hash: they answer while hashing is saturated.
        const health = await t.app.inject({ url: '/health' });
        assert.equal(health.statusCode, 200, health.body);
      } finally {
        release();
        await holder;
      }
      // The queued ones complete once the slot frees: wrong passwords, 401.
      const all = await Promise.all(flood);
      assert.equal(all.filter((r) => r.statusCode === 401).length, QUEUE);
      assert.deepEqual(
        { running: t.ctx.passwords.stats().running, queued: t.ctx.passwords.stats().queued },
        {
          running: 0,
          queued: 0,
        },
      );
    });

    it("hash-queue-flood-others-sign-in: someone else's sign-in completes during a flood, retrying on 503", async () => {
      const user = await createUser(t, { email: 'patient@example.com', password: PASSWORD });
      let flooding = true;
      // A steady flood: 8 attackers, each firing again as soon as it is answered.
      const attackers = Array.from({ length: 8 }, async (_, a) => {
        let n = 0;
        while (flooding) await login(`attacker-${a}-${n++}@example.com`, 'a wrong password 2');
        return n;
      });
      let attempts = 0;
      let res: LightMyRequestResponse | undefined;
      try {
        // The person starts only once the flood saturates the queue (it has had refusals), so the
        // sign-in below is made during the flood, not before it (a loop guard, not a clock).
        const rejected = t.ctx.passwords.stats().rejected;
        for (let round = 0; t.ctx.passwords.stats().rejected < rejected + 8 && round < 1000; round++)
          await new Promise((r) => setTimeout(r, 10));
        assert.ok(t.ctx.passwords.stats().rejected >= rejected + 8, 'the flood saturated the queue');
        const me = ip();
        for (; attempts < 200; attempts++) {
          res = await login(user.email, PASSWORD, me);
          if (res.statusCode !== 503) break;
          // As Retry-After asks, in spirit (shortened: this waits, it does not measure).
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        flooding = false;
      }
      const sent = await Promise.all(attackers);
      assert.equal(res?.statusCode, 200, res?.body);
      assert.ok(sent.reduce((a, b) => a + b, 0) > 8, 'the flood was running');
      // The 503s counted nothing against the person: the sign-in succeeded with the right password.
      assert.equal(t.ctx.passwords.stats().queued, 0);
    });
  });
}
