import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { countLogin } from '../../src/modules/core/metrics.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
// Values as Go's ParseFloat reads them (the format's definition): NaN and Inf case-insensitively,
// which matters because prom-client writes NaN as "Nan".
const VALUE = '(?:[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?|[nN][aA][nN]|[+-][iI][nN][fF])';
const SAMPLE = new RegExp(`^(${NAME})(\\{(?:${LABEL}(?:,${LABEL})*,?)?\\})? (${VALUE})(?: -?\\d+)?$`);

type Samples = Map<string, number>;

/** A small Prometheus text-format (0.0.4) check: every sample line is `name{labels} value`. */
function parsePrometheus(text: string): Samples {
  const samples: Samples = new Map();
  const types = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      assert.ok(m, `bad comment line: ${line}`);
      if (m[1] === 'TYPE') {
        assert.ok(!types.has(m[2] ?? ''), `metric ${m[2]} declared twice`);
        types.add(m[2] ?? '');
        assert.match(m[3] ?? '', /^(counter|gauge|histogram|summary|untyped)$/);
      }
      continue;
    }
    const m = SAMPLE.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const key = `${m[1]}${m[2] ?? ''}`;
    assert.ok(!samples.has(key), `duplicate sample ${key}`);
    const raw = m[3]?.toLowerCase() ?? '';
    samples.set(
      key,
      raw === 'nan' ? Number.NaN : raw.endsWith('inf') ? Number(raw.replace('inf', 'Infinity')) : Number(raw),
    );
  }
  return samples;
}

/** The value of the sample whose name matches and whose labels include all the given pairs. */
function sample(samples: Samples, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const [key, value] of samples) {
    const brace = key.indexOf('{');
    if ((brace < 0 ? key : key.slice(0, brace)) !== name) continue;
    if (Object.entries(labels).every(([k, v]) => key.includes(`${k}="${v}"`))) return value;
  }
  return undefined;
}

for (const dialect of DIALECTS) {
  describe(`metrics [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      // Anonymous scraping is opened explicitly (the default is closed: see below).
      t = await buildTestApp(dialect, { env: { METRICS_PUBLIC: 'true' } });
    });
    after(() => t.destroy());

    const scrape = async () => {
      const res = await t.app.inject({ url: '/metrics' });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      return parsePrometheus(res.body);
    };

    it('serves Prometheus text with the gauges, live sessions counted', async () => {
      // Sessions before the first scrape: the session count is cached for a few seconds.
      const user = await createUser(t);
      await authHeaders(t, user);
      await authHeaders(t, user);
      const s = await scrape();
      assert.equal(sample(s, 'gatehouse_active_sessions'), 2);
      assert.equal(sample(s, 'gatehouse_outbox_pending'), 0);
      assert.equal(sample(s, 'gatehouse_database_up'), 1);
      assert.ok((sample(s, 'gatehouse_database_ping_seconds') ?? -1) >= 0);
      // Event-loop delay and the other process metrics come from prom-client's defaults.
      assert.notEqual(sample(s, 'nodejs_eventloop_lag_p99_seconds'), undefined);
      const pool = sample(s, 'gatehouse_database_pool_connections', { state: 'total' });
      if (dialect === 'postgres') assert.ok((pool ?? 0) >= 1);
      else assert.equal(pool, undefined);
    });

    it('counts requests by route pattern and status', async () => {
      const count = (s: Samples, route: string, status: string, method = 'GET') =>
        sample(s, 'gatehouse_http_request_duration_seconds_count', { method, route, status_code: status }) ??
        0;
      const before = await scrape();
      for (let i = 0; i < 3; i++) assert.equal((await t.app.inject({ url: '/health' })).statusCode, 200);
      const id = '0193aaaa-0000-7000-8000-000000000000';
      await t.app.inject({ method: 'PUT', url: `/api/v1/admin/modules/${id}`, payload: { enabled: true } });
      await t.app.inject({ url: '/no/such/path' });
      const after = await scrape();
      assert.equal(count(after, '/health', '200') - count(before, '/health', '200'), 3);
      // A route is its pattern, never the raw URL; an unknown URL is one series.
      assert.equal(count(after, '/api/v1/admin/modules/:name', '401', 'PUT'), 1);
      assert.equal(count(after, 'unmatched', '404') - count(before, 'unmatched', '404'), 1);
      for (const key of after.keys()) assert.ok(!key.includes(id) && !key.includes('/no/such/path'), key);
      // The histogram's buckets are cumulative and end at the count.
      assert.equal(
        sample(after, 'gatehouse_http_request_duration_seconds_bucket', { route: '/health', le: '+Inf' }),
        count(after, '/health', '200'),
      );
    });

    it('counts login outcomes reported by the auth module', async () => {
      const before = await scrape();
      assert.equal(sample(before, 'gatehouse_logins_total', { outcome: 'success' }), 0);
      countLogin(t.ctx, 'success');
      countLogin(t.ctx, 'failure');
      countLogin(t.ctx, 'failure');
      const after = await scrape();
      assert.equal(sample(after, 'gatehouse_logins_total', { outcome: 'success' }), 1);
      assert.equal(sample(after, 'gatehouse_logins_total', { outcome: 'failure' }), 2);
      assert.equal(sample(after, 'gatehouse_logins_total', { outcome: 'rate_limited' }), 0);
    });

    it('is not listed in the index or the module list', async () => {
      const index = await t.app.inject({ url: '/' });
      assert.ok(!index.body.includes('/metrics'));
      const headers = await authHeaders(t, await firstAdmin(t));
      const modules = await t.app.inject({ url: '/api/v1/admin/modules', headers });
      assert.ok(!modules.body.includes('/metrics'));
    });

    it('keeps apps apart: another app in the process has its own counters', async () => {
      const other = await buildTestApp(dialect, { env: { METRICS_PUBLIC: 'true' } });
      try {
        countLogin(other.ctx, 'success');
        const res = await other.app.inject({ url: '/metrics' });
        assert.equal(sample(parsePrometheus(res.body), 'gatehouse_logins_total', { outcome: 'success' }), 1);
        assert.equal(sample(await scrape(), 'gatehouse_logins_total', { outcome: 'success' }), 1);
      } finally {
        await other.destroy();
      }
    });
  });

  describe(`metrics: login outcomes through HTTP [${dialect}]`, () => {
    const PASSWORD = 'a long and unusual passphrase 7';
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, {
        env: { LOGIN_FAILURES_PER_ADDRESS_PER_MIN: '2', METRICS_PUBLIC: 'true' },
      });
    });
    after(() => t.destroy());

    const logins = async () => {
      const res = await t.app.inject({ url: '/metrics' });
      assert.equal(res.statusCode, 200);
      const s = parsePrometheus(res.body);
      const of = (outcome: string) => sample(s, 'gatehouse_logins_total', { outcome }) ?? Number.NaN;
      return { success: of('success'), failure: of('failure'), rate_limited: of('rate_limited') };
    };
    const login = (email: string, password: string, remoteAddress: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/login', payload: { email, password }, remoteAddress });

    it('a login counts a success, a bad password a failure, a throttled attempt rate_limited', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const start = await logins();

      assert.equal((await login(user.email, PASSWORD, '10.9.0.1')).statusCode, 200);
      assert.deepEqual(await logins(), { ...start, success: start.success + 1 });

      assert.equal((await login(user.email, 'not the password 123', '10.9.0.2')).statusCode, 401);
      assert.deepEqual(await logins(), { ...start, success: start.success + 1, failure: start.failure + 1 });

      // The second failure spends the address budget of two; the next attempt is throttled.
      assert.equal((await login('nobody@example.com', 'not the password 123', '10.9.0.2')).statusCode, 401);
      assert.equal((await login(user.email, PASSWORD, '10.9.0.2')).statusCode, 429);
      assert.deepEqual(await logins(), {
        success: start.success + 1,
        failure: start.failure + 2,
        rate_limited: start.rate_limited + 1,
      });
    });
  });

  describe(`metrics closed by default [${dialect}]`, () => {
    it('metrics-anonymous-by-default: without METRICS_TOKEN or METRICS_PUBLIC=true, /metrics answers 404', async () => {
      const t = await buildTestApp(dialect);
      try {
        const res = await t.app.inject({ url: '/metrics' });
        assert.equal(res.statusCode, 404);
        assert.equal(json(res).code, 'not_found');
        assert.ok(!res.body.includes('gatehouse_'));
        const headers = await authHeaders(t, await firstAdmin(t));
        const asAdmin = await t.app.inject({ url: '/metrics', headers });
        assert.equal(asAdmin.statusCode, 404, 'an access token is not the metrics token');
      } finally {
        await t.destroy();
      }
    });
  });

  describe(`metrics with METRICS_TOKEN [${dialect}]`, () => {
    const TOKEN = 'metrics-token-0123456789abcdef';
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { METRICS_TOKEN: TOKEN } });
    });
    after(() => t.destroy());

    it('answers 401 without the token or with a wrong one, 200 with it', async () => {
      const none = await t.app.inject({ url: '/metrics' });
      assert.equal(none.statusCode, 401);
      assert.equal(json(none).code, 'unauthenticated');
      assert.match(String(none.headers['www-authenticate']), /^Bearer /);
      for (const authorization of [`Bearer ${TOKEN}x`, 'Bearer short', `Basic ${TOKEN}`, TOKEN]) {
        const res = await t.app.inject({ url: '/metrics', headers: { authorization } });
        assert.equal(res.statusCode, 401, authorization);
        assert.ok(!res.body.includes('gatehouse_'), 'no metrics leak in a refusal');
      }
      const ok = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(ok.statusCode, 200);
      parsePrometheus(ok.body);
    });
  });
}
