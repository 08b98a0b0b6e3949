import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { revokeSession } from '../../src/identity/index.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';

// The guard reads a token's session and user through one cache (src/identity/tokens/session-cache.ts). Whatever path writes, the writing instance must refuse the token on the very
// next request: these go through every revoke path of the API, right after warming the cache.

const PASSWORD = 'an entirely fresh passphrase 1';
const NEW_PASSWORD = 'another entirely fresh passphrase 2';

/** A way the API ends a user's sessions, or makes their tokens stale. */
interface RevokePath {
  name: string;
  user?: { role?: 'admin'; password?: string };
  /** The request is made with one session and must end another one of the same user. */
  otherSession?: boolean;
  /** `by`: whose token makes the request, the user's own or the admin's. */
  request: (user: UserRow) => {
    method: 'POST' | 'PUT' | 'DELETE';
    url: string;
    by: 'self' | 'admin';
    payload?: object;
  };
  status: number;
  /** The refusal the warmed token gets afterwards. */
  code?: string;
}

const REVOKE_PATHS: RevokePath[] = [
  { name: 'logout', request: () => ({ method: 'POST', url: '/api/v1/logout', by: 'self' }), status: 204 },
  {
    name: 'logout with scope global (the other sessions too)',
    otherSession: true,
    request: () => ({ method: 'POST', url: '/api/v1/logout', by: 'self', payload: { scope: 'global' } }),
    status: 204,
  },
  {
    name: 'disable',
    request: (u) => ({
      method: 'PUT',
      url: `/api/v1/users/${u.id}`,
      by: 'admin',
      payload: { status: 'disabled' },
    }),
    status: 200,
  },
  {
    name: 'delete',
    request: (u) => ({ method: 'DELETE', url: `/api/v1/users/${u.id}`, by: 'admin' }),
    status: 204,
  },
  {
    name: 'role change',
    user: { role: 'admin' },
    request: (u) => ({ method: 'PUT', url: `/api/v1/users/${u.id}`, by: 'admin', payload: { role: 'user' } }),
    status: 200,
    code: 'token_invalid',
  },
  {
    name: 'password change (the other sessions)',
    user: { password: PASSWORD },
    otherSession: true,
    request: () => ({
      method: 'PUT',
      url: '/api/v1/change-password',
      by: 'self',
      payload: { current_password: PASSWORD, new_password: NEW_PASSWORD },
    }),
    status: 200,
  },
  {
    name: 'password set by an admin',
    user: { password: PASSWORD },
    request: (u) => ({
      method: 'PUT',
      url: `/api/v1/users/${u.id}`,
      by: 'admin',
      payload: { password: NEW_PASSWORD },
    }),
    status: 200,
  },
];

/** Waits (bounded) for the reader's LISTEN connection (PostgreSQL), so that the cache is really in use. */
async function caching(t: TestApp): Promise<void> {
  for (let i = 0; i < 200 && !t.ctx.sessions.caching; i++) await sleep(25);
  assert.equal(t.ctx.sessions.caching, true, 'the session cache is in use');
}

for (const dialect of DIALECTS) {
  describe(`session cache: every revoke path is seen by the writer at once [${dialect}]`, () => {
    let t: TestApp;
    let admin: string;
    before(async () => {
      t = await buildTestApp(dialect);
      admin = (await sessionFor(t, await firstAdmin(t))).access_token;
      await caching(t);
    });
    after(() => t.destroy());

    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const verify = (token: string) => t.app.inject({ url: '/api/v1/verify-token', headers: bearer(token) });
    /** Two verifications: the second one is answered from the cache where there is one. */
    const warm = async (token: string) => {
      for (let i = 0; i < 2; i++) assert.equal((await verify(token)).statusCode, 200);
    };
    const refused = async (token: string, code = 'session_revoked') => {
      const res = await verify(token);
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, code);
    };
    const tokenOf = async (user: UserRow) => (await sessionFor(t, user)).access_token;

    for (const path of REVOKE_PATHS) {
      it(path.name, async () => {
        const user = await createUser(t, path.user);
        const token = await tokenOf(user);
        const watched = path.otherSession ? await tokenOf(user) : token;
        await warm(watched);
        const { by, ...request } = path.request(user);
        const res = await t.app.inject({ ...request, headers: bearer(by === 'admin' ? admin : token) });
        assert.equal(res.statusCode, path.status);
        await refused(watched, path.code);
      });
    }

    it('a write inside a transaction is seen from its commit on, and a rolled-back one never', async () => {
      const token = await tokenOf(await createUser(t));
      await warm(token);
      const claims = await t.ctx.accessTokens.verify(token);
      await t.ctx.db
        .transaction()
        .execute(async (trx) => {
          await revokeSession(trx, claims.sid, 'test');
          throw new Error('roll back');
        })
        .catch(() => {});
      await warm(token);
      await t.ctx.db.transaction().execute((trx) => revokeSession(trx, claims.sid, 'test'));
      await refused(token);
    });

    it('a changed user shows in the next verify-token body', async () => {
      const user = await createUser(t);
      const token = await tokenOf(user);
      await warm(token);
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${user.id}`,
        headers: bearer(admin),
        payload: { name: 'Renamed' },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(json<{ user: { name: string } }>(await verify(token)).user.name, 'Renamed');
    });

    if (dialect === 'sqlite') {
      it('a commit by another process to the file (the CLI) is seen on the next request', async () => {
        const token = await tokenOf(await createUser(t));
        await warm(token);
        const claims = await t.ctx.accessTokens.verify(token);
        const other = new SQLite(t.databaseUrl.slice('sqlite:'.length));
        try {
          other.prepare('update sessions set revoked_at = ? where id = ?').run(Date.now(), claims.sid);
        } finally {
          other.close();
        }
        await refused(token);
      });
    }

    if (dialect === 'postgres') {
      it('answers from memory: with the triggers off, a write from outside goes unseen', async () => {
        const token = await tokenOf(await createUser(t));
        await warm(token);
        const claims = await t.ctx.accessTokens.verify(token);
        const outside = new pg.Client({ connectionString: t.databaseUrl });
        await outside.connect();
        try {
          await outside.query('begin');
          await outside.query('alter table sessions disable trigger sessions_auth_notify');
          await outside.query('update sessions set revoked_at = $1 where id = $2', [Date.now(), claims.sid]);
          await outside.query('alter table sessions enable trigger sessions_auth_notify');
          await outside.query('commit');
        } finally {
          await outside.end();
        }
        // Served from memory: nothing told this instance. (The triggers exist so that this never happens.)
        assert.equal((await verify(token)).statusCode, 200);
        // With the trigger on, the same write from outside reaches the cache.
        await sql`update sessions set revoked_reason = 'again' where id = ${claims.sid}`.execute(t.ctx.db);
        await refused(token);
      });
    }
  });

  describe(`session cache: a token's role claim that the user no longer has [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
      await caching(t);
    });
    after(() => t.destroy());

    it('verify-token refuses a demoted admin token (claims.role stale) with 401 telling to refresh', async () => {
      const user = await createUser(t, { role: 'admin' });
      const { access_token, refresh_token } = await sessionFor(t, user);
      const verify = (token: string) =>
        t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${token}` } });
      assert.equal(json<{ claims: { role: string } }>(await verify(access_token)).claims.role, 'admin');
      // Demoted by a path that is not the API (no call site to remember any cache).
      await t.ctx.db.updateTable('users').set({ role: 'user' }).where('id', '=', user.id).execute();
      const res = await verify(access_token);
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'token_invalid');
      assert.match(json<{ detail: string }>(res).detail, /refresh/);
      assert.match(String(res.headers['www-authenticate']), /invalid_token/);
      // A refreshed token carries the role the user has now.
      const refreshed = await t.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        payload: { refresh_token },
      });
      assert.equal(refreshed.statusCode, 200);
      const body = json<{ claims: { role: string } }>(
        await verify(json<{ access_token: string }>(refreshed).access_token),
      );
      assert.equal(body.claims.role, 'user');
    });
  });
}
