import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { FULL, keyHeaders, makeKey, problemCode, rowCount } from './helpers.ts';

type User = { id: string; email: string | null; kind: string; name: string };

for (const dialect of DIALECTS) {
  describe(`api keys: service accounts [${dialect}]`, () => {
    let t: TestApp;
    let admin: Record<string, string>;
    let bot: User;
    before(async () => {
      t = await buildTestApp(dialect, { env: FULL });
      admin = await authHeaders(t, await firstAdmin(t));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/service-accounts',
        headers: admin,
        payload: { name: 'Deploy Robot' },
      });
      assert.equal(res.statusCode, 201, res.body);
      bot = json<User>(res);
    });
    after(() => t.destroy());

    it('is a user of kind service with no e-mail; persons are kind person', async () => {
      assert.equal(bot.kind, 'service');
      assert.equal(bot.email, null);
      const me = json<User>(await t.app.inject({ method: 'GET', url: '/api/v1/profile', headers: admin }));
      assert.equal(me.kind, 'person');
      const got = json<User>(
        await t.app.inject({ method: 'GET', url: `/api/v1/users/${bot.id}`, headers: admin }),
      );
      assert.deepEqual({ kind: got.kind, email: got.email }, { kind: 'service', email: null });
    });

    it('?kind= filters the users list (anything else 400), stats count by_kind, search finds it by name', async () => {
      const services = json<{ data: User[]; total: number }>(
        await t.app.inject({ method: 'GET', url: '/api/v1/users?kind=service', headers: admin }),
      );
      assert.deepEqual(
        services.data.map((u) => u.id),
        [bot.id],
      );
      assert.equal(services.total, 1);
      const people = json<{ data: User[]; total: number }>(
        await t.app.inject({ method: 'GET', url: '/api/v1/users?kind=person', headers: admin }),
      );
      assert.ok(people.data.every((u) => u.kind === 'person'));
      const all = json<{ total: number }>(
        await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: admin }),
      );
      assert.equal(people.total + services.total, all.total);
      const bad = await t.app.inject({ method: 'GET', url: '/api/v1/users?kind=robot', headers: admin });
      assert.equal(bad.statusCode, 400);
      assert.equal(problemCode(bad), 'validation_failed');
      const stats = json<{ total: number; by_kind: { person: number; service: number } }>(
        await t.app.inject({ method: 'GET', url: '/api/v1/users/stats', headers: admin }),
      );
      assert.deepEqual(stats.by_kind, { person: stats.total - 1, service: 1 });
      const found = json<{ data: User[] }>(
        await t.app.inject({ method: 'GET', url: '/api/v1/users/search?q=robot', headers: admin }),
      );
      assert.deepEqual(
        found.data.map((u) => u.id),
        [bot.id],
      );
    });

    it('acts through an admin-made key; no e-mail, password, reset or factor reset (400)', async () => {
      const key = await makeKey(t, admin, { user_id: bot.id, scopes: ['users:read'] });
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: keyHeaders(key.key) }))
          .statusCode,
        403,
      );
      const self = await t.app.inject({
        method: 'GET',
        url: `/api/v1/users/${bot.id}`,
        headers: keyHeaders(key.key),
      });
      assert.equal(self.statusCode, 200);
      for (const payload of [{ email: 'bot@example.com' }, { password: 'a long enough passphrase here' }]) {
        const res = await t.app.inject({
          method: 'PUT',
          url: `/api/v1/users/${bot.id}`,
          headers: admin,
          payload,
        });
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(problemCode(res), 'validation_failed');
      }
      for (const [method, url] of [
        ['POST', `/api/v1/users/${bot.id}/password-reset`],
        ['DELETE', `/api/v1/users/${bot.id}/mfa`],
      ] as const) {
        const res = await t.app.inject({
          method,
          url,
          headers: admin,
          ...(method === 'POST' && { payload: {} }),
        });
        assert.equal(res.statusCode, 400, `${method} ${url}: ${res.body}`);
      }
      // No interactive sign-in of any kind: the column's placeholder is no address.
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: `service:${bot.id}`, password: 'anything at all, long' },
      });
      assert.ok(login.statusCode === 400 || login.statusCode === 401, login.body);
    });

    it('disabling suspends its keys, enabling restores them; deleting revokes them', async () => {
      const key = await makeKey(t, admin, { user_id: bot.id, scopes: ['auth:read'] });
      const use = () => t.app.inject({ method: 'GET', url: '/api/v1/profile', headers: keyHeaders(key.key) });
      assert.equal((await use()).statusCode, 200);
      await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${bot.id}`,
        headers: admin,
        payload: { status: 'disabled' },
      });
      assert.equal(problemCode(await use()), 'account_disabled');
      await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${bot.id}`,
        headers: admin,
        payload: { status: 'active' },
      });
      assert.equal((await use()).statusCode, 200);
      const before = await rowCount(t, 'api_keys');
      assert.equal(
        (await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${bot.id}`, headers: admin })).statusCode,
        204,
      );
      assert.equal(problemCode(await use()), 'token_invalid');
      assert.equal(await rowCount(t, 'api_keys'), before, 'kept, revoked');
      const revoked = await t.ctx.db
        .selectFrom('api_keys')
        .select('revoked_at')
        .where('owner_id', '=', bot.id)
        .execute();
      assert.ok(revoked.length >= 2 && revoked.every((r) => r.revoked_at !== null));
    });

    it('bad input stores nothing', async () => {
      const before = await rowCount(t, 'users');
      for (const payload of [
        {},
        { name: '' },
        { name: 'x', email: 'a@b.c' },
        { name: 'x', role: 'owner' },
        { name: 'x', roles: ['r'] },
      ]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/service-accounts',
          headers: admin,
          payload,
        });
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(problemCode(res), 'validation_failed');
      }
      assert.equal(await rowCount(t, 'users'), before);
    });
  });
}
