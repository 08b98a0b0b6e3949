import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { type CutMode, startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

// The whole service on PostgreSQL behind a proxy the test cuts and restores: the database goes
// away (never the machine's shared server: only this proxy), the service answers 503 and stays up,
// and it recovers by itself when the database is reachable again.
const base = process.env.TEST_DATABASE_URL;

describe('PostgreSQL outage [postgres]', { skip: base ? false : 'needs TEST_DATABASE_URL' }, () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let headers: { authorization: string };

  const modules = () => t.app.inject({ url: '/api/v1/admin/modules', headers });
  // An endpoint whose answer needs the database itself. The module list does not: with the caller's
  // session in the session cache and the module state in memory, it may rightly answer 200 while
  // new connections are refused (nobody can revoke anything then; docs/deployment.md).
  const users = () => t.app.inject({ url: '/api/v1/users?limit=1', headers });
  const detailed = () => t.app.inject({ url: '/health/detailed' });

  /** Polls until the service answers 200 again; fails after `attempts` polls 100 ms apart. */
  async function recovered(attempts = 150): Promise<void> {
    for (let i = 0; i < attempts; i++) {
      const [health, api] = await Promise.all([detailed(), modules()]);
      if (health.statusCode === 200 && api.statusCode === 200) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail('the service did not recover after the database came back');
  }

  function assertUnavailable(res: LightMyRequestResponse): void {
    assert.equal(res.statusCode, 503, res.body);
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
    const body = json(res);
    assert.equal(body.code, 'unavailable');
    assert.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After is set');
    assert.doesNotMatch(res.body, /127\.0\.0\.1|postgres|ECONN|terminated/i, 'no internals leak');
  }

  before(async () => {
    database = await createTestDatabase('postgres');
    const target = new URL(database.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    t = await buildTestApp('postgres', {
      database: { url: proxy.rewrite(database.url), drop: () => database.drop() },
      env: { DATABASE_STATEMENT_TIMEOUT_MS: '1000', DATABASE_POOL_MAX: '4' },
    });
    headers = await authHeaders(t, await firstAdmin(t));
    assert.equal((await modules()).statusCode, 200);
  });
  after(async () => {
    await t.close();
    await proxy.close();
    await database.drop();
  });

  const modes: Array<[CutMode, string]> = [
    ['refuse', 'unreachable (connections refused)'],
    ['reset', 'connections accepted and dropped at once'],
    ['blackhole', 'a silent network drop (nothing answers, nothing closes)'],
  ];
  for (const [mode, what] of modes) {
    it(`database ${what}: 503 unavailable and health down, then recovery without a restart`, async () => {
      await proxy.cut(mode);
      try {
        const [health, api] = await Promise.all([detailed(), users()]);
        assert.equal(health.statusCode, 503);
        const body = json<{ status: string; checks: { database: { status: string } } }>(health);
        assert.equal(body.status, 'down');
        assert.equal(body.checks.database.status, 'error');
        assertUnavailable(api);
        // Liveness and the index need no database.
        assert.equal((await t.app.inject({ url: '/health' })).statusCode, 200);
        assert.equal((await t.app.inject({ url: '/' })).statusCode, 200);
        const core = await t.app.inject({ url: '/api/v1/core/health' });
        assert.equal(core.statusCode, 503);
        assert.equal(json(core).database, 'down');
      } finally {
        await proxy.restore();
      }
      await recovered();
      // The module listener is back too: a toggle still works end to end.
      const toggle = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/idp',
        headers,
        payload: { enabled: mode !== 'reset' },
      });
      assert.equal(toggle.statusCode, 200);
    });
  }

  it('backends terminated in a loop while requests run: only 200 or 503, no crash, then all 200', async (tc) => {
    const killer = new pg.Client({ connectionString: base });
    await killer.connect();
    const name = new URL(database.url).pathname.slice(1);
    let killing = true;
    let kills = 0;
    const loop = (async () => {
      while (killing) {
        const r = await killer.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
          [name],
        );
        kills += r.rowCount ?? 0;
        await new Promise((r) => setTimeout(r, 15));
      }
    })();
    const statuses = new Map<number, number>();
    try {
      for (let round = 0; round < 40; round++) {
        const batch = await Promise.all([
          modules(),
          t.app.inject({ url: '/api/v1/verify-token', headers }),
          detailed(),
          t.app.inject({
            method: 'PUT',
            url: '/api/v1/admin/modules/invitations',
            headers,
            payload: { enabled: round % 2 === 0 },
          }),
        ]);
        for (const res of batch) {
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          if (res.statusCode === 503 && res.headers['content-type']?.toString().includes('problem')) {
            assertUnavailable(res);
          }
        }
      }
    } finally {
      killing = false;
      await loop;
      await killer.end();
    }
    tc.diagnostic(`backends terminated: ${kills}; answers: ${JSON.stringify(Object.fromEntries(statuses))}`);
    assert.ok(kills > 0, 'backends were terminated');
    for (const status of statuses.keys()) assert.ok(status === 200 || status === 503, `got ${status}`);
    assert.ok(statuses.has(503), `the churn was felt: ${JSON.stringify([...statuses])}`);
    await recovered();
    const after = await Promise.all(Array.from({ length: 10 }, () => modules()));
    for (const res of after) assert.equal(res.statusCode, 200);
  });
});
