import assert from 'node:assert/strict';
import { existsSync, mkdirSync, renameSync, rmdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { problemMismatch } from '../helpers/hardening.ts';
import { firstAdmin, sessionFor } from '../helpers/users.ts';

/*
 * The SQLite database becoming unavailable while the service runs: requests get 503 `unavailable`
 * with Retry-After (never a 500, never a wrong 401), health says `down`, and when the fault goes
 * away the same process serves again. (PostgreSQL outages are covered with the PostgreSQL helpers.)
 * Tests run as root, so chmod cannot make the file unreadable; the faults here are real ones that
 * bite root too: the file gone, a directory in its place, another connection holding the write lock.
 */
describe('SQLite unavailable, and back [sqlite]', () => {
  let t: TestApp;
  let path: string;
  let bearer: Record<string, string>;
  let refreshToken: string;

  const assertUnavailable = (res: LightMyRequestResponse) => {
    assert.equal(problemMismatch(res, 503, ['unavailable']), null);
    assert.equal(res.headers['retry-after'], '5');
  };
  const login = () =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/login',
      payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    });

  before(async () => {
    t = await buildTestApp('sqlite');
    path = t.databaseUrl.slice('sqlite:'.length);
    const session = await sessionFor(t, await firstAdmin(t));
    bearer = { authorization: `Bearer ${session.access_token}` };
    refreshToken = session.refresh_token;
  });
  after(() => t.destroy());

  /** Runs `fault`, checks the service is down through it, undoes it, checks it is up again. */
  async function throughOutage(fault: () => void, undo: () => void): Promise<void> {
    assert.equal((await t.app.inject({ url: '/api/v1/verify-token', headers: bearer })).statusCode, 200);
    t.ctx.database.dropConnection?.();
    fault();
    try {
      assertUnavailable(await t.app.inject({ url: '/api/v1/verify-token', headers: bearer }));
      assertUnavailable(await login());
      assertUnavailable(
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/refresh-token',
          payload: { refresh_token: refreshToken },
        }),
      );
      const detailed = await t.app.inject({ url: '/health/detailed' });
      assert.equal(detailed.statusCode, 503);
      assert.equal(json(detailed).status, 'down');
      assert.deepEqual(json<{ checks: { database: unknown } }>(detailed).checks.database, {
        status: 'error',
      });
      const core = await t.app.inject({ url: '/api/v1/core/health' });
      assert.equal(core.statusCode, 503);
      assert.equal(json(core).database, 'down');
      // Liveness touches no database: the process is alive and says so.
      assert.equal((await t.app.inject({ url: '/health' })).statusCode, 200);
    } finally {
      undo();
    }
    // Back without a restart: the same app, the same tokens, the data as it was.
    assert.equal((await t.app.inject({ url: '/api/v1/verify-token', headers: bearer })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/health/detailed' })).statusCode, 200);
    assert.equal((await login()).statusCode, 200);
  }

  it('answers 503 while the file is gone, creates no empty database in its place, and recovers', async () => {
    await throughOutage(
      () => renameSync(path, `${path}.away`),
      () => {
        // Requests during the outage must not have created a fresh, empty database file.
        assert.equal(existsSync(path), false, 'no empty database was created in place of the missing one');
        renameSync(`${path}.away`, path);
      },
    );
  });

  it('answers 503 while a directory stands where the file was, and recovers', async () => {
    await throughOutage(
      () => {
        renameSync(path, `${path}.away`);
        mkdirSync(path);
      },
      () => {
        rmdirSync(path);
        renameSync(`${path}.away`, path);
      },
    );
  });

  it('answers 503 to writes while another connection holds the write lock; the refused write changed nothing', async () => {
    const other = new SQLite(path);
    other.pragma('busy_timeout = 0');
    other.exec('begin exclusive');
    try {
      // The refresh needs the write lock; it waits busy_timeout, then is refused and rolled back.
      assertUnavailable(
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/refresh-token',
          payload: { refresh_token: refreshToken },
        }),
      );
      // Reads go on in WAL mode: the database is reachable, so health stays ok.
      assert.equal((await t.app.inject({ url: '/api/v1/verify-token', headers: bearer })).statusCode, 200);
      assert.equal((await t.app.inject({ url: '/health/detailed' })).statusCode, 200);
    } finally {
      other.exec('rollback');
      other.close();
    }
    // The refused rotation left the token unused: it rotates now.
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/refresh-token',
      payload: { refresh_token: refreshToken },
    });
    assert.equal(res.statusCode, 200, res.body);
  });
});
