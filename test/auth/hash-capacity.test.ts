import assert from 'node:assert/strict';
import { pbkdf2 } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { defaultMaxConcurrent } from '../../src/security/passwords.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';

const PASSWORD = 'a long and unusual passphrase 7';

/**
 * Keeps every libuv worker busy for a while, so an argon2 job started now waits behind them: the
 * one hashing slot stays taken for as long as these run, while requests (which need no worker on
 * their way to the hasher) go through. Nothing here asserts on time; the order is what matters.
 */
function occupyThreadPool(): Promise<unknown> {
  const work = promisify(pbkdf2);
  return Promise.all(
    Array.from({ length: defaultMaxConcurrent() }, () => work('x', 'salt', 500_000, 32, 'sha256')),
  );
}

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
      const pool = occupyThreadPool();
      const holder = t.ctx.passwords.hash('holds the only hashing slot');
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
        await Promise.all([holder, pool]);
      }
      const counters = await t.ctx.db
        .selectFrom('throttle_counters')
        .select('key')
        .where('key', '=', 'login:addr:10.4.0.1')
        .execute();
      assert.equal(counters.length, 0, 'a refused-for-capacity attempt is not a failed password');

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
