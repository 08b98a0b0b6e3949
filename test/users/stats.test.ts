import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { allUsers, DAY, insertUsers, type UserSpec } from './fixtures.ts';

type Stats = {
  total: number;
  by_role: Record<'admin' | 'user', number>;
  by_status: Record<'active' | 'invited' | 'disabled', number>;
  by_kind: Record<'person' | 'service', number>;
  created: Record<'last_24h' | 'last_7d' | 'last_30d', number>;
  active: Record<'last_24h' | 'last_7d' | 'last_30d', number>;
};

const HOUR = 3_600_000;

/** Stats computed from the rows themselves (windows are far from the edges used below). */
function expected(users: UserRow[], now: number): Stats {
  const within = (ms: number | null, window: number) => ms !== null && ms >= now - window;
  const windows = { last_24h: DAY, last_7d: 7 * DAY, last_30d: 30 * DAY } as const;
  const count = (f: (u: UserRow) => boolean) => users.filter(f).length;
  const per = (field: 'created_at' | 'last_login_at') =>
    Object.fromEntries(
      Object.entries(windows).map(([k, w]) => [k, count((u) => within(u[field], w))]),
    ) as Stats['created'];
  return {
    total: users.length,
    by_role: { admin: count((u) => u.role === 'admin'), user: count((u) => u.role === 'user') },
    by_status: {
      active: count((u) => u.status === 'active'),
      invited: count((u) => u.status === 'invited'),
      disabled: count((u) => u.status === 'disabled'),
    },
    by_kind: { person: count((u) => u.kind === 'person'), service: count((u) => u.kind === 'service') },
    created: per('created_at'),
    active: per('last_login_at'),
  };
}

for (const dialect of DIALECTS) {
  describe(`users stats [${dialect}]`, () => {
    let t: TestApp;
    let headers: { authorization: string };
    let inserted: UserRow[];
    before(async () => {
      t = await buildTestApp(dialect);
      headers = await authHeaders(t, await firstAdmin(t));
      const now = Date.now();
      const ages = [2 * HOUR, 30 * HOUR, 3 * DAY, 10 * DAY, 29 * DAY, 31 * DAY, 40 * DAY, 400 * DAY];
      const specs: UserSpec[] = [];
      for (let i = 0; i < 48; i++) {
        specs.push({
          email: `s${i}@stats.test`,
          role: i % 5 === 0 ? 'admin' : 'user',
          status: i % 6 === 0 ? 'invited' : i % 4 === 0 ? 'disabled' : 'active',
          created_at: now - ages[i % ages.length]!,
          last_login_at: i % 3 === 0 ? null : now - ages[(i * 5) % ages.length]! / 2,
        });
      }
      inserted = await insertUsers(t, specs);
    });
    after(() => t.destroy());

    const stats = async () => {
      const res = await t.app.inject({ url: '/api/v1/users/stats', headers });
      assert.equal(res.statusCode, 200);
      return json<Stats>(res);
    };
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);

    it('has the shape of docs/api.md §6, adds up, and matches the rows', async () => {
      const s = await stats();
      assert.deepEqual(Object.keys(s).sort(), [
        'active',
        'by_kind',
        'by_role',
        'by_status',
        'created',
        'total',
      ]);
      assert.equal(sum(s.by_role), s.total);
      assert.equal(sum(s.by_status), s.total);
      assert.deepEqual(s, expected(await allUsers(t), Date.now()));
      assert.ok(s.created.last_24h <= s.created.last_7d && s.created.last_7d <= s.created.last_30d);
    });

    it('stays in step with updates, logins and deletes (the counters move with every write)', async () => {
      const [a, b, c, d] = inserted;
      await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${a!.id}`,
        headers,
        payload: { role: a!.role === 'admin' ? 'user' : 'admin', status: 'disabled' },
      });
      await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${b!.id}`, headers });
      // Logins: a new day bucket, the same day again, and clearing one.
      const now = Date.now();
      await t.ctx.db.updateTable('users').set({ last_login_at: now }).where('id', '=', c!.id).execute();
      await t.ctx.db
        .updateTable('users')
        .set({ last_login_at: now - 1000 })
        .where('id', '=', c!.id)
        .execute();
      await t.ctx.db.updateTable('users').set({ last_login_at: null }).where('id', '=', d!.id).execute();
      await t.ctx.db
        .updateTable('users')
        .set({ created_at: now - 50 * DAY })
        .where('id', '=', d!.id)
        .execute();
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers,
        payload: { email: 'fresh@stats.test' },
      });
      assert.equal(created.statusCode, 201);
      const s = await stats();
      assert.equal(sum(s.by_role), s.total);
      assert.equal(sum(s.by_status), s.total);
      assert.deepEqual(s, expected(await allUsers(t), Date.now()));
    });

    it('the counter tables agree with a full count', async () => {
      const byBucket = await sql<{ role: string; status: string; n: number }>`
        select role, status, count(*) as n from users group by role, status`.execute(t.ctx.db);
      const counters = await sql<{ role: string; status: string; n: number }>`
        select role, status, sum(n) as n from user_counts group by role, status having sum(n) <> 0`.execute(
        t.ctx.db,
      );
      const norm = (rows: Array<{ role: string; status: string; n: number }>) =>
        rows.map((r) => `${r.role}/${r.status}=${Number(r.n)}`).sort();
      assert.deepEqual(norm(counters.rows), norm(byBucket.rows));
      const logins = await sql<{
        n: number;
      }>`select count(*) as n from users where last_login_at is not null`.execute(t.ctx.db);
      const loginCounters = await sql<{ n: number }>`select sum(n) as n from user_login_days`.execute(
        t.ctx.db,
      );
      assert.equal(Number(loginCounters.rows[0]?.n), Number(logins.rows[0]?.n));
    });
  });
}
