import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ACCOUNT_FAILURE_LIMIT,
  ACCOUNT_WINDOW_MS,
  addressBucket,
  createLoginThrottle,
} from '../../src/identity/budgets/throttle.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';

const PASSWORD = 'a long and unusual passphrase 7';
const WRONG = 'not the passphrase at all, sorry';

describe('addressBucket', () => {
  it('keeps IPv4 as is, unwraps IPv4-mapped IPv6 and groups other IPv6 per /64', () => {
    assert.equal(addressBucket('203.0.113.9'), '203.0.113.9');
    assert.equal(addressBucket('::ffff:203.0.113.9'), '203.0.113.9');
    assert.equal(addressBucket('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(addressBucket('2001:db8:1:2::9'), '2001:db8:1:2::/64');
    assert.equal(addressBucket('2001:0db8:0001:0002:ffff::1'), '2001:db8:1:2::/64');
    assert.equal(addressBucket('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressBucket('::1'), '0:0:0:0::/64');
    assert.equal(addressBucket(null), 'unknown');
  });
});

for (const dialect of DIALECTS) {
  describe(`login throttling [${dialect}]`, () => {
    let t: TestApp;
    const login = (email: string, password: string, remoteAddress: string, app = t) =>
      app.app.inject({ method: 'POST', url: '/api/v1/login', payload: { email, password }, remoteAddress });

    before(async () => {
      t = await buildTestApp(dialect, { env: { LOGIN_FAILURES_PER_ADDRESS_PER_MIN: '3' } });
    });
    after(() => t.destroy());

    it('after 5 failures for one account from one address answers 429 with Retry-After, without hashing', async () => {
      const user = await createUser(t, { password: PASSWORD });
      for (let i = 0; i < ACCOUNT_FAILURE_LIMIT; i++) {
        // This app's per-address budget is 3; clearing it after each failure leaves only the
        // account-and-address counter to accumulate.
        const res = await login(user.email, WRONG, '10.2.0.1');
        assert.equal(res.statusCode, 401, `attempt ${i + 1}`);
        await t.ctx.db.deleteFrom('throttle_counters').where('key', '=', 'login:addr:10.2.0.1').execute();
      }
      const stats = t.ctx.passwords.stats();
      const blocked = await login(user.email, PASSWORD, '10.2.0.1');
      assert.equal(blocked.statusCode, 429);
      assert.equal(json(blocked).code, 'rate_limited');
      const retryAfter = Number(blocked.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= ACCOUNT_WINDOW_MS / 1000);
      assert.deepEqual(t.ctx.passwords.stats(), stats, 'a throttled attempt costs no hashing');

      // The same account from another address is not affected.
      assert.equal((await login(user.email, PASSWORD, '10.2.0.2')).statusCode, 200);
    });

    it('throttles unknown emails the same way (and without the dummy hash once throttled)', async () => {
      const email = 'ghost@example.com';
      for (let i = 0; i < ACCOUNT_FAILURE_LIMIT; i++) {
        assert.equal((await login(email, WRONG, '10.2.1.1')).statusCode, 401);
        await t.ctx.db.deleteFrom('throttle_counters').where('key', '=', 'login:addr:10.2.1.1').execute();
      }
      const dummies = t.ctx.passwords.stats().dummyVerifications;
      const res = await login(email, WRONG, '10.2.1.1');
      assert.equal(res.statusCode, 429);
      assert.equal(t.ctx.passwords.stats().dummyVerifications, dummies);
    });

    it('a success resets the account count for that address', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const fail = async () => {
        const res = await login(user.email, WRONG, '10.2.2.1');
        await t.ctx.db.deleteFrom('throttle_counters').where('key', '=', 'login:addr:10.2.2.1').execute();
        return res.statusCode;
      };
      for (let i = 0; i < ACCOUNT_FAILURE_LIMIT - 1; i++) assert.equal(await fail(), 401);
      assert.equal((await login(user.email, PASSWORD, '10.2.2.1')).statusCode, 200);
      // A full budget again: five more failures before the sixth attempt is refused.
      for (let i = 0; i < ACCOUNT_FAILURE_LIMIT; i++) assert.equal(await fail(), 401, `failure ${i + 1}`);
      assert.equal((await login(user.email, PASSWORD, '10.2.2.1')).statusCode, 429);
    });

    it('applies the per-address budget (LOGIN_FAILURES_PER_ADDRESS_PER_MIN) across accounts', async () => {
      const user = await createUser(t, { password: PASSWORD });
      for (let i = 0; i < 3; i++) {
        assert.equal((await login(`someone-${i}@example.com`, WRONG, '10.2.3.1')).statusCode, 401);
      }
      const res = await login(user.email, PASSWORD, '10.2.3.1');
      assert.equal(res.statusCode, 429);
      const retryAfter = Number(res.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      // Another address still has its budget.
      assert.equal((await login(user.email, PASSWORD, '10.2.3.2')).statusCode, 200);
    });

    it('counts IPv6 clients per /64', async () => {
      for (let i = 1; i <= 3; i++) {
        assert.equal((await login(`v6-${i}@example.com`, WRONG, `2001:db8:7:7::${i}`)).statusCode, 401);
      }
      assert.equal((await login('v6-4@example.com', WRONG, '2001:db8:7:7::99')).statusCode, 429);
    });

    it('starts a new window once the old one has run out', async () => {
      const user = await createUser(t, { password: PASSWORD });
      for (let i = 0; i < 3; i++) await login(`expired-${i}@example.com`, WRONG, '10.2.4.1');
      assert.equal((await login(user.email, PASSWORD, '10.2.4.1')).statusCode, 429);
      // Move the window into the past instead of waiting for it.
      await t.ctx.db
        .updateTable('throttle_counters')
        .set({ window_started_at: Date.now() - 61_000 })
        .where('key', '=', 'login:addr:10.2.4.1')
        .execute();
      assert.equal((await login('expired-x@example.com', WRONG, '10.2.4.1')).statusCode, 401);
      const row = await t.ctx.db
        .selectFrom('throttle_counters')
        .selectAll()
        .where('key', '=', 'login:addr:10.2.4.1')
        .executeTakeFirstOrThrow();
      assert.equal(row.count, 1, 'the failure after the window opened a fresh count');
    });

    it('loses no count when failures arrive concurrently (atomic reservation)', async () => {
      const other = await buildTestApp(dialect, { env: { LOGIN_FAILURES_PER_ADDRESS_PER_MIN: '1000' } });
      try {
        const results = await Promise.all(
          // Ten accounts, so only the address counter is shared (one account's budget stops at 5).
          Array.from({ length: 10 }, (_, i) => login(`race-${i}@example.com`, WRONG, '10.2.5.1', other)),
        );
        assert.deepEqual(
          results.map((r) => r.statusCode),
          Array(10).fill(401),
        );
        const row = await other.ctx.db
          .selectFrom('throttle_counters')
          .selectAll()
          .where('key', '=', 'login:addr:10.2.5.1')
          .executeTakeFirstOrThrow();
        assert.equal(row.count, 10);
      } finally {
        await other.destroy();
      }
    });

    it('holds across instances sharing the database', async () => {
      const second = await t.restart();
      try {
        for (let i = 0; i < 3; i++) await login(`shared-${i}@example.com`, WRONG, '10.2.6.1');
        const res = await login('shared-x@example.com', WRONG, '10.2.6.1', second);
        assert.equal(res.statusCode, 429);
      } finally {
        await second.close();
      }
    });

    it('stores no email address in the counter table', async () => {
      const keys = await t.ctx.db.selectFrom('throttle_counters').select('key').execute();
      assert.ok(keys.length > 0);
      for (const { key } of keys) assert.doesNotMatch(key, /@/);
    });

    it('prunes counters whose windows are over', async () => {
      const now = Date.now();
      await t.ctx.db
        .insertInto('throttle_counters')
        .values([
          { key: 'login:addr:192.0.2.1', count: 3, window_started_at: now - ACCOUNT_WINDOW_MS - 1000 },
          { key: 'login:addr:192.0.2.2', count: 3, window_started_at: now },
        ])
        .execute();
      const throttle = createLoginThrottle(t.ctx.db, { failuresPerAddressPerMin: 3 });
      assert.ok((await throttle.prune(now)) >= 1);
      const left = await t.ctx.db
        .selectFrom('throttle_counters')
        .select('key')
        .where('key', 'in', ['login:addr:192.0.2.1', 'login:addr:192.0.2.2'])
        .execute();
      assert.deepEqual(
        left.map((r) => r.key),
        ['login:addr:192.0.2.2'],
      );
    });
  });
}
