import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { revokeSession } from '../../src/modules/auth/sessions.service.ts';
import { updateUser } from '../../src/modules/users/users.queries.ts';
import { createAuthenticator } from '../../src/security/guard.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

// The guard remembers an authenticated caller while the SQLite connection has written nothing
// (src/security/guard.ts). These pin that any change to the caller's rows shows on the very next
// request, that nothing is remembered where that cannot be known, and that hits are real hits.

for (const dialect of DIALECTS) {
  describe(`remembered callers [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const verify = (token: string) => t.app.inject({ url: '/api/v1/verify-token', headers: bearer(token) });
    const twice = async (token: string) => {
      assert.equal((await verify(token)).statusCode, 200);
      const res = await verify(token);
      assert.equal(res.statusCode, 200);
      return json<{ user: { name: string; role: string } }>(res);
    };

    it('a revoked session fails on the next request', async () => {
      const { access_token } = await sessionFor(t, await createUser(t));
      await twice(access_token);
      const claims = await t.ctx.accessTokens.verify(access_token);
      await revokeSession(t.ctx.db, claims.sid, 'logout');
      const res = await verify(access_token);
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'session_revoked');
    });

    it('a disabled or deleted user fails on the next request', async () => {
      const disabled = await createUser(t);
      const deleted = await createUser(t);
      const a = await sessionFor(t, disabled);
      const b = await sessionFor(t, deleted);
      await twice(a.access_token);
      await twice(b.access_token);
      await updateUser(t.ctx.db, disabled.id, { status: 'disabled', updated_at: Date.now() });
      assert.equal((await verify(a.access_token)).statusCode, 401);
      await t.ctx.db.deleteFrom('users').where('id', '=', deleted.id).execute();
      assert.equal((await verify(b.access_token)).statusCode, 401);
    });

    it('a changed user shows in the next verify-token body and the next admin check', async () => {
      const admin = await createUser(t, { role: 'admin' });
      const { access_token } = await sessionFor(t, admin);
      assert.equal(
        (await t.app.inject({ url: '/api/v1/users', headers: bearer(access_token) })).statusCode,
        200,
      );
      assert.equal((await twice(access_token)).user.role, 'admin');
      await updateUser(t.ctx.db, admin.id, { role: 'user', name: 'Renamed', updated_at: Date.now() });
      const body = json<{ user: { name: string; role: string } }>(await verify(access_token));
      assert.deepEqual([body.user.role, body.user.name], ['user', 'Renamed']);
      const refused = await t.app.inject({ url: '/api/v1/users', headers: bearer(access_token) });
      assert.equal(refused.statusCode, 403);
    });

    it('remembers a caller until any row is written, and only where writes can be counted', async () => {
      const { access_token } = await sessionFor(t, await createUser(t));
      const authenticator = createAuthenticator(t.ctx.db, t.ctx.accessTokens);
      const first = await authenticator.authenticate(access_token);
      if (dialect === 'postgres') {
        // Other instances write to the same database: every request reads the rows.
        assert.equal(authenticator.remembered(access_token), undefined);
        return;
      }
      assert.equal(authenticator.remembered(access_token), first);
      // A write that touches neither the session nor the user still forgets every caller.
      await t.ctx.db.insertInto('throttle_counters').values(throttleRow()).execute();
      assert.equal(authenticator.remembered(access_token), undefined);
      const again = await authenticator.authenticate(access_token);
      assert.notEqual(again, first);
      assert.equal(authenticator.remembered(access_token), again);
    });

    it('answers from the rows, not from memory, while a transaction holds the connection', async () => {
      const { access_token } = await sessionFor(t, await createUser(t));
      const authenticator = createAuthenticator(t.ctx.db, t.ctx.accessTokens);
      await authenticator.authenticate(access_token);
      const claims = await t.ctx.accessTokens.verify(access_token);
      await t.ctx.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('sessions')
          .set({ revoked_at: Date.now() })
          .where('id', '=', claims.sid)
          .execute();
        assert.equal(authenticator.remembered(access_token), undefined);
      });
      await assert.rejects(authenticator.authenticate(access_token), { code: 'session_revoked' });
    });

    it('a size of 0 remembers nobody', async () => {
      const { access_token } = await sessionFor(t, await createUser(t));
      const authenticator = createAuthenticator(t.ctx.db, t.ctx.accessTokens, 0);
      await authenticator.authenticate(access_token);
      assert.equal(authenticator.remembered(access_token), undefined);
    });

    if (dialect === 'sqlite') {
      it('a commit by another connection to the file is seen within the data_version check', async () => {
        const { access_token } = await sessionFor(t, await createUser(t));
        await twice(access_token);
        const claims = await t.ctx.accessTokens.verify(access_token);
        const other = new SQLite(t.databaseUrl.slice('sqlite:'.length));
        try {
          other.prepare('update sessions set revoked_at = ? where id = ?').run(Date.now(), claims.sid);
        } finally {
          other.close();
        }
        // PRAGMA data_version is read at most every 250 ms (src/db/database.ts).
        await sleep(300);
        assert.equal((await verify(access_token)).statusCode, 401);
      });
    }
  });
}

function throttleRow() {
  return { key: `remembered-callers:${Math.random()}`, count: 1, window_started_at: Date.now() };
}
