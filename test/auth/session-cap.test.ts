import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/platform/config.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp, testEnv } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';

const PASSWORD = 'a long and unusual passphrase 7';
const MAX = 3;

interface Pair {
  access_token: string;
  refresh_token: string;
}

for (const dialect of DIALECTS) {
  describe(`sessions per account: SESSIONS_PER_USER_MAX (${dialect})`, () => {
    let t: TestApp;
    let address = 0;
    before(async () => {
      t = await buildTestApp(dialect, { env: { SESSIONS_PER_USER_MAX: String(MAX) } });
    });
    after(() => t.destroy());

    async function login(user: UserRow): Promise<Pair> {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        remoteAddress: `10.71.2.${++address}`,
        payload: { email: user.email, password: PASSWORD },
      });
      assert.equal(res.statusCode, 200, res.body);
      return json<Pair>(res);
    }
    const verify = (p: Pair) =>
      t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${p.access_token}` } });
    const liveCount = async (userId: string) =>
      (
        await t.ctx.db
          .selectFrom('sessions')
          .select('id')
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .execute()
      ).length;

    /* unbounded-sessions: an account could hold any number of sessions and no document said what
       happens (ASVS 5.0 7.1.2); now a sign-in at the cap ends that account's oldest session, audited. */
    it('a sign-in at the cap ends the oldest session of that account, audited as session_limit', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const other = await createUser(t, { password: PASSWORD });
      const otherPair = await login(other);
      const pairs: Pair[] = [];
      for (let i = 0; i < MAX; i++) pairs.push(await login(user));
      assert.equal(await liveCount(user.id), MAX);
      for (const p of pairs) assert.equal((await verify(p)).statusCode, 200);
      const [oldest] = await t.ctx.db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .execute();
      assert.ok(oldest);

      const newest = await login(user);
      assert.equal(await liveCount(user.id), MAX, 'still at the cap');
      const first = await verify(pairs[0] as Pair);
      assert.equal(first.statusCode, 401);
      assert.equal(json(first).code, 'session_revoked');
      const refresh = await t.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        payload: { refresh_token: (pairs[0] as Pair).refresh_token },
      });
      assert.equal(refresh.statusCode, 401);
      for (const p of [...pairs.slice(1), newest]) assert.equal((await verify(p)).statusCode, 200);
      // Another account's sessions do not count.
      assert.equal((await verify(otherPair)).statusCode, 200);

      const row = await t.ctx.db
        .selectFrom('sessions')
        .select(['revoked_reason'])
        .where('id', '=', oldest.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.revoked_reason, 'session_limit');
      const entry = await t.ctx.db
        .selectFrom('audit_log')
        .select(['actor_type', 'details'])
        .where('action', '=', 'session.revoke')
        .where('target_id', '=', oldest.id)
        .executeTakeFirstOrThrow();
      assert.equal(entry.actor_type, 'system');
      assert.deepEqual(JSON.parse(entry.details), {
        user_id: user.id,
        reason: 'session_limit',
        sessions_max: MAX,
      });
    });

    /* unbounded-sessions: sessions that already ended leave room; only live ones count. */
    it('ended sessions do not count toward the cap', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const pairs: Pair[] = [];
      for (let i = 0; i < MAX; i++) pairs.push(await login(user));
      const logout = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: { authorization: `Bearer ${(pairs[0] as Pair).access_token}` },
      });
      assert.equal(logout.statusCode, 204);
      const next = await login(user);
      for (const p of [...pairs.slice(1), next]) assert.equal((await verify(p)).statusCode, 200);
      assert.equal(await liveCount(user.id), MAX);
    });

    it('the cap is 100 unless configured, and must be at least 1', () => {
      assert.equal(loadConfig(testEnv(t.databaseUrl)).sessionsPerUserMax, 100);
      assert.throws(
        () => loadConfig(testEnv(t.databaseUrl, { SESSIONS_PER_USER_MAX: '0' })),
        /SESSIONS_PER_USER_MAX/,
      );
    });
  });
}
