import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';

const PASSWORD = 'a long and unusual passphrase 7';

for (const dialect of DIALECTS) {
  describe(`password hashing at capacity [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      // One hash at a time and no waiting line: the smallest hasher, configured, not patched.
      t = await buildTestApp(dialect, { env: { PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '0' } });
    });
    after(() => t.destroy());

    it('answers 503 unavailable with Retry-After when no hashing slot is free, and counts no failure', async () => {
      const user = await createUser(t, { password: PASSWORD });
      // Hold the only hashing slot until the refusals are seen: order, not timing, decides.
      let release = () => {};
      const holder = t.ctx.passwords.run(() => new Promise<void>((resolve) => (release = resolve)));
      const rejectedBefore = t.ctx.passwords.stats().rejected;
      try {
        for (const email of [user.email, 'nobody-at-all@example.com']) {
          const res = await t.app.inject({
            method: 'POST',
            url: '/api/v1/login',
            payload: { email, password: PASSWORD },
            remoteAddress: '10.4.0.1',
          });
          assert.equal(res.statusCode, 503, res.body);
          assert.equal(json(res).code, 'unavailable');
          assert.equal(res.headers['retry-after'], '1');
        }
        assert.equal(t.ctx.passwords.stats().rejected, rejectedBefore + 2);
      } finally {
        release();
        await holder;
      }
      // The attempt was reserved before hashing and given back: the row may exist, counting nothing.
      const counters = await t.ctx.db
        .selectFrom('throttle_counters')
        .select(['key', 'count'])
        .where('key', '=', 'login:addr:10.4.0.1')
        .where('count', '>', 0)
        .execute();
      assert.deepEqual(counters, [], 'a refused-for-capacity attempt is not a failed password');

      const ok = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: user.email, password: PASSWORD },
        remoteAddress: '10.4.0.1',
      });
      assert.equal(ok.statusCode, 200);
    });
  });
}
