import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { migrations } from '../../src/platform/db/migrations/index.ts';
import { LATER_MODULES, MODULES } from '../helpers/api-contract.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
const APPLIED = Object.keys(migrations).length;

interface Detailed {
  status: string;
  version: string;
  uptime_s: number;
  checks: Record<string, { status: string; latency_ms?: number }>;
  modules: Record<string, boolean>;
}

/** Nothing about the deployment's internals may appear in a health answer. */
function assertNoInternals(t: TestApp, body: string): void {
  const url = new URL(t.databaseUrl.replace(/^sqlite:/, 'file:'));
  // The module list's key `passwordless` (docs/api.md §2, §20) is a name, not a password: it alone is
  // taken out before looking for "password" anywhere else.
  const scrubbed = body.replaceAll('"passwordless":', '"<module>":');
  for (const secret of [t.databaseUrl, url.pathname, 'postgres://', 'sqlite:', 'password']) {
    assert.ok(!scrubbed.includes(secret), `no "${secret}" in ${body}`);
  }
  assert.doesNotMatch(body, /\bat .+:\d+|Error:|destroyed|ECONN/i, 'no stack traces or driver messages');
}

for (const dialect of DIALECTS) {
  describe(`health [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('GET /health is exactly {"status":"ok"}', async () => {
      const res = await t.app.inject({ url: '/health' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.body, '{"status":"ok"}');
    });

    it('GET /health/detailed reports checks, modules, version and uptime', async () => {
      const res = await t.app.inject({ url: '/health/detailed' });
      assert.equal(res.statusCode, 200);
      const body = json<Detailed>(res);
      assert.deepEqual(Object.keys(body).sort(), ['checks', 'modules', 'status', 'uptime_s', 'version']);
      assert.equal(body.status, 'ok');
      assert.equal(body.version, VERSION);
      assert.equal(typeof body.uptime_s, 'number');
      assert.ok(body.uptime_s >= 0);
      assert.equal(body.checks.database?.status, 'ok');
      assert.equal(typeof body.checks.database?.latency_ms, 'number');
      // Not configured: reported as disabled, and the whole is still ok.
      assert.deepEqual(body.checks.mailer, { status: 'disabled' });
      assert.deepEqual(body.checks.idp, { status: 'disabled' });
      assert.deepEqual(Object.keys(body.modules), [...MODULES.map((m) => m.name), ...LATER_MODULES]);
      assert.deepEqual(body.modules, t.ctx.modules.snapshot());
      assertNoInternals(t, res.body);
    });

    it('GET /api/v1/core/health reports the database and the migrations', async () => {
      const res = await t.app.inject({ url: '/api/v1/core/health' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(json(res), {
        module: 'core',
        status: 'ok',
        database: 'ok',
        migrations: { applied: APPLIED, pending: 0 },
      });
    });

    it('core health is 503 while a migration is pending', async () => {
      const row = await t.ctx.db
        .selectFrom('gatehouse_migrations' as never)
        .selectAll()
        .orderBy('name' as never, 'desc')
        .executeTakeFirstOrThrow();
      const name = (row as { name: string }).name;
      await t.ctx.db
        .deleteFrom('gatehouse_migrations' as never)
        .where('name' as never, '=', name as never)
        .execute();
      try {
        const res = await t.app.inject({ url: '/api/v1/core/health' });
        assert.equal(res.statusCode, 503);
        assert.deepEqual(json(res), {
          module: 'core',
          status: 'down',
          database: 'ok',
          migrations: { applied: APPLIED - 1, pending: 1 },
        });
      } finally {
        await t.ctx.db
          .insertInto('gatehouse_migrations' as never)
          .values(row as never)
          .execute();
      }
      assert.equal((await t.app.inject({ url: '/api/v1/core/health' })).statusCode, 200);
    });

    it('with the database gone: liveness stays 200, checks answer 503, nothing leaks', async () => {
      const headers = await authHeaders(t, await firstAdmin(t));
      await t.ctx.database.close();

      const live = await t.app.inject({ url: '/health' });
      assert.equal(live.statusCode, 200, 'liveness touches no database');

      const detailed = await t.app.inject({ url: '/health/detailed' });
      assert.equal(detailed.statusCode, 503);
      const body = json<Detailed>(detailed);
      assert.equal(body.status, 'down');
      assert.deepEqual(body.checks.database, { status: 'error' });
      assertNoInternals(t, detailed.body);

      const core = await t.app.inject({ url: '/api/v1/core/health' });
      assert.equal(core.statusCode, 503);
      assert.deepEqual(json(core), {
        module: 'core',
        status: 'down',
        database: 'down',
        migrations: { applied: 0, pending: 0 },
      });
      assertNoInternals(t, core.body);

      // Endpoints that need the database answer 503 unavailable, not 500.
      const admin = await t.app.inject({ url: '/api/v1/admin/modules', headers });
      assert.equal(admin.statusCode, 503);
      assert.equal(admin.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(json(admin).code, 'unavailable');
      assert.ok(Number(admin.headers['retry-after']) > 0);
      assertNoInternals(t, admin.body);

      // The index needs no database either.
      assert.equal((await t.app.inject({ url: '/' })).statusCode, 200);
    });
  });
}
