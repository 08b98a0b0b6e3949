import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { createUser, sessionFor } from '../helpers/users.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

// Two instances on one PostgreSQL database, each with its own session cache
// (src/identity/tokens/session-cache.ts): what one writes, the other must not keep answering from memory.
const base = process.env.TEST_DATABASE_URL;
// docs/api.md §16: a revocation is seen by every instance within 100 ms at p99, measured by this
// test. The bound is the contract, so it is asserted: of TRIALS logouts, at most the 1% allowed may
// be seen later than BOUND_MS (with 50 trials: none). The figure is printed too.
const TRIALS = 50;
const BOUND_MS = 100;
// A safety stop for a token that is never refused (2 s of asking).
const GIVE_UP_MS = 2000;
describe('session cache across two instances [postgres]', {
  skip: base ? false : 'needs TEST_DATABASE_URL',
}, () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await buildTestApp('postgres');
    b = await a.restart();
    for (let i = 0; i < 200 && !(a.ctx.sessions.caching && b.ctx.sessions.caching); i++) await sleep(25);
    assert.ok(a.ctx.sessions.caching && b.ctx.sessions.caching, 'both caches in use');
  });
  after(async () => {
    await b.close();
    await a.destroy();
  });

  const verify = (t: TestApp, token: string) =>
    t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${token}` } });

  // Revocation across instances (docs/api.md §16): a logout on one PostgreSQL instance was accepted by
  // another for up to ~150 ms. Per trial, the delay is how long after the logout's answer the other
  // instance could still say yes: the start of the first verify it refused (every verify that started
  // earlier was still accepted). Verifies run back to back, yielding to I/O between them.
  it('revocation-across-instances: a logout on one instance is refused by the other within 100 ms at p99', async (ctx) => {
    const delays: number[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const { access_token } = await sessionFor(a, await createUser(a));
      for (let i = 0; i < 2; i++) assert.equal((await verify(b, access_token)).statusCode, 200);
      const logout = await a.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: { authorization: `Bearer ${access_token}` },
      });
      assert.equal(logout.statusCode, 204);
      const loggedOutAt = performance.now();
      for (;;) {
        const startedAt = performance.now();
        const res = await verify(b, access_token);
        if (res.statusCode !== 200) {
          assert.equal(json(res).code, 'session_revoked');
          delays.push(startedAt - loggedOutAt);
          break;
        }
        assert.ok(startedAt - loggedOutAt < GIVE_UP_MS, 'the other instance still accepts the token');
        await setImmediate();
      }
    }
    delays.sort((x, y) => x - y);
    const p99 = delays[Math.ceil(TRIALS * 0.99) - 1] as number;
    const beyond = delays.filter((d) => d > BOUND_MS).length;
    ctx.diagnostic(
      `logout refused by the other instance after (ms, ${TRIALS} trials): median ${delays[TRIALS / 2]?.toFixed(1)}, p99 ${p99.toFixed(1)}, max ${delays.at(-1)?.toFixed(1)}; beyond ${BOUND_MS} ms: ${beyond}`,
    );
    assert.ok(
      beyond <= Math.floor(TRIALS * 0.01),
      `p99 ${p99.toFixed(1)} ms: ${beyond} of ${TRIALS} trials beyond ${BOUND_MS} ms`,
    );
  });

  // The notification is the fast path; the bound must hold when it never comes. A LISTEN connection
  // that went silent (a network drop) is replaced only after its heartbeat goes unanswered for 5 s,
  // and meanwhile the cache used to keep answering: docs/api.md §16's bound held only while
  // notifications flowed. Memory now answers only while a heartbeat sent within FRESH_MS came back.
  it('revocation-across-instances: a silent LISTEN connection stops the cache within the bound, before it is counted dead', async (ctx) => {
    const target = new URL(a.databaseUrl);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const c = await a.restart({ DATABASE_LISTEN_URL: proxy.rewrite(a.databaseUrl) });
    try {
      for (let i = 0; i < 200 && !c.ctx.sessions.caching; i++) await sleep(25);
      assert.ok(c.ctx.sessions.caching, 'the third instance caches');
      const { access_token } = await sessionFor(a, await createUser(a));
      for (let i = 0; i < 2; i++) assert.equal((await verify(c, access_token)).statusCode, 200);
      await proxy.cut('blackhole');
      const logout = await a.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: { authorization: `Bearer ${access_token}` },
      });
      assert.equal(logout.statusCode, 204);
      const loggedOutAt = performance.now();
      let refusedAfter = -1;
      while (refusedAfter < 0 && performance.now() - loggedOutAt < GIVE_UP_MS) {
        const startedAt = performance.now();
        if ((await verify(c, access_token)).statusCode === 401) refusedAfter = startedAt - loggedOutAt;
        else await setImmediate();
      }
      assert.ok(refusedAfter >= 0, 'the instance that heard nothing still accepts the token');
      assert.equal(c.ctx.sessions.caching, true, 'refused while its listener still counts as connected');
      ctx.diagnostic(`no notification: refused after ${refusedAfter.toFixed(1)} ms`);
    } finally {
      await proxy.restore();
      await c.close();
      await proxy.close();
    }
  });

  it('while its LISTEN connection is down, an instance reads the rows (never stale by accident)', async () => {
    const { access_token } = await sessionFor(a, await createUser(a));
    for (let i = 0; i < 2; i++) assert.equal((await verify(b, access_token)).statusCode, 200);
    const claims = await a.ctx.accessTokens.verify(access_token);
    const outside = new pg.Client({ connectionString: a.databaseUrl });
    await outside.connect();
    try {
      // Every LISTEN connection on the database is cut; b's cache must stop answering.
      await outside.query(
        `select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and application_name = 'gatehouse listen gatehouse_auth'`,
      );
      for (let i = 0; i < 200 && b.ctx.sessions.caching; i++) await sleep(5);
      assert.equal(b.ctx.sessions.caching, false, 'the cache is off while the listener is down');
      // A write nobody announces (triggers off): only a database read can see it.
      await outside.query('begin');
      await outside.query('alter table sessions disable trigger sessions_auth_notify');
      await outside.query('update sessions set revoked_at = $1 where id = $2', [Date.now(), claims.sid]);
      await outside.query('alter table sessions enable trigger sessions_auth_notify');
      await outside.query('commit');
    } finally {
      await outside.end();
    }
    if (!b.ctx.sessions.caching) {
      const res = await verify(b, access_token);
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'session_revoked');
    }
    // Back: the cache starts empty, so the revocation made meanwhile still holds.
    for (let i = 0; i < 400 && !b.ctx.sessions.caching; i++) await sleep(25);
    assert.equal(b.ctx.sessions.caching, true, 'the listener reconnects');
    assert.equal((await verify(b, access_token)).statusCode, 401);
  });
});
