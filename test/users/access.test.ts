import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

for (const dialect of DIALECTS) {
  describe(`users access rules [${dialect}]`, () => {
    let t: TestApp;
    let admin: UserRow;
    let alice: UserRow;
    let bob: UserRow;
    let adminH: { authorization: string };
    let aliceH: { authorization: string };
    before(async () => {
      t = await buildTestApp(dialect);
      admin = await firstAdmin(t);
      alice = await createUser(t, { name: 'Alice', email: 'alice@example.com' });
      bob = await createUser(t, { name: 'Bob', email: 'bob@example.com' });
      adminH = await authHeaders(t, admin);
      aliceH = await authHeaders(t, alice);
    });
    after(() => t.destroy());

    const adminOnly = () => [
      { method: 'GET' as const, url: '/api/v1/users' },
      { method: 'GET' as const, url: '/api/v1/users/search?q=bo' },
      { method: 'GET' as const, url: '/api/v1/users/stats' },
      { method: 'POST' as const, url: '/api/v1/users', payload: { email: 'new@example.com' } },
      { method: 'DELETE' as const, url: `/api/v1/users/${bob.id}` },
    ];

    it('admin-only endpoints: 401 without a token, 403 for a user, served for an admin', async () => {
      for (const req of adminOnly()) {
        const anonymous = await t.app.inject(req);
        assert.equal(anonymous.statusCode, 401, `${req.method} ${req.url}`);
        assert.match(String(anonymous.headers['www-authenticate']), /^Bearer/);
        const user = await t.app.inject({ ...req, headers: aliceH });
        assert.equal(user.statusCode, 403, `${req.method} ${req.url}`);
        assert.equal(json(user).code, 'forbidden');
      }
      for (const url of ['/api/v1/users', '/api/v1/users/search?q=bo', '/api/v1/users/stats']) {
        assert.equal((await t.app.inject({ url, headers: adminH })).statusCode, 200, url);
      }
    });

    it('get: an admin reads anyone, a user reads only themself', async () => {
      const byAdmin = await t.app.inject({ url: `/api/v1/users/${alice.id}`, headers: adminH });
      assert.equal(byAdmin.statusCode, 200);
      assert.equal(json(byAdmin).email, 'alice@example.com');
      assert.equal(json(byAdmin).password_hash, undefined);
      const self = await t.app.inject({ url: `/api/v1/users/${alice.id}`, headers: aliceH });
      assert.equal(self.statusCode, 200);
      const other = await t.app.inject({ url: `/api/v1/users/${bob.id}`, headers: aliceH });
      assert.equal(other.statusCode, 403);
      assert.equal(json(other).code, 'forbidden');
      // Another user's id that does not exist is a 403 too: existence is not revealed.
      const ghost = await t.app.inject({ url: `/api/v1/users/${uuidv7()}`, headers: aliceH });
      assert.equal(ghost.statusCode, 403);
    });

    it('malformed and unknown ids are 404 not_found', async () => {
      const malformed = [
        'not-a-uuid',
        '123',
        `${alice.id}x`,
        'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
        "1' or '1'='1",
      ];
      for (const id of malformed) {
        const url = `/api/v1/users/${encodeURIComponent(id)}`;
        for (const headers of [adminH, aliceH]) {
          assert.equal((await t.app.inject({ url, headers })).statusCode, 404, `GET ${id}`);
          const put = await t.app.inject({ method: 'PUT', url, headers, payload: { name: 'x' } });
          assert.equal(put.statusCode, 404, `PUT ${id}`);
          assert.equal(json(put).code, 'not_found');
        }
        const del = await t.app.inject({ method: 'DELETE', url, headers: adminH });
        assert.equal(del.statusCode, 404, `DELETE ${id}`);
      }
      const unknown = `/api/v1/users/${uuidv7()}`;
      assert.equal((await t.app.inject({ url: unknown, headers: adminH })).statusCode, 404);
      const put = await t.app.inject({
        method: 'PUT',
        url: unknown,
        headers: adminH,
        payload: { name: 'x' },
      });
      assert.equal(put.statusCode, 404);
      assert.equal((await t.app.inject({ method: 'DELETE', url: unknown, headers: adminH })).statusCode, 404);
      // Ids are case-insensitive UUIDs.
      const upper = await t.app.inject({ url: `/api/v1/users/${alice.id.toUpperCase()}`, headers: adminH });
      assert.equal(upper.statusCode, 200);
    });

    it('a user may change their own name and nothing else', async () => {
      const url = `/api/v1/users/${alice.id}`;
      const ok = await t.app.inject({
        method: 'PUT',
        url,
        headers: aliceH,
        payload: { name: '  Alice L.  ' },
      });
      assert.equal(ok.statusCode, 200);
      assert.equal(json(ok).name, 'Alice L.');
      for (const payload of [
        { email: 'alice2@example.com' },
        { role: 'admin' },
        { status: 'disabled' },
        { password: 'a perfectly fine passphrase here' },
        { name: 'Alice', role: 'user' },
      ]) {
        const res = await t.app.inject({ method: 'PUT', url, headers: aliceH, payload });
        assert.equal(res.statusCode, 403, JSON.stringify(payload));
        assert.equal(json(res).code, 'forbidden');
      }
      const other = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${bob.id}`,
        headers: aliceH,
        payload: { name: 'Hacked' },
      });
      assert.equal(other.statusCode, 403);
      const stored = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', alice.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.role, 'user');
      assert.equal(stored.email, 'alice@example.com');
    });

    it('unknown fields and an empty update are 400 validation_failed', async () => {
      const cases = [
        { method: 'PUT' as const, url: `/api/v1/users/${bob.id}`, payload: { nickname: 'b' } },
        { method: 'PUT' as const, url: `/api/v1/users/${bob.id}`, payload: { name: 'B', is_admin: true } },
        { method: 'PUT' as const, url: `/api/v1/users/${bob.id}`, payload: {} },
        { method: 'PUT' as const, url: `/api/v1/users/${bob.id}`, payload: { status: 'invited' } },
        {
          method: 'POST' as const,
          url: '/api/v1/users',
          payload: { email: 'x@example.com', status: 'active' },
        },
        { method: 'GET' as const, url: '/api/v1/users?page=2' },
        { method: 'GET' as const, url: '/api/v1/users/search?q=a&offset=3' },
      ];
      for (const req of cases) {
        const res = await t.app.inject({ ...req, headers: adminH });
        assert.equal(res.statusCode, 400, `${req.method} ${req.url} ${JSON.stringify(req.payload)}`);
        assert.equal(json(res).code, 'validation_failed');
      }
      // A user sending an unknown field gets the same 400 (the schema speaks before the rules).
      const own = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${alice.id}`,
        headers: aliceH,
        payload: { nickname: 'a' },
      });
      assert.equal(own.statusCode, 400);
    });

    it('search and stats are routed before /users/<id>; the index lists the seven endpoints', async () => {
      const search = await t.app.inject({ url: '/api/v1/users/search?q=alice', headers: adminH });
      assert.deepEqual(Object.keys(json(search)).sort(), ['data', 'next_cursor', 'total']);
      const stats = await t.app.inject({ url: '/api/v1/users/stats', headers: adminH });
      assert.ok('by_role' in json(stats));
      const index = json<{ documentation: Record<string, Record<string, string>> }>(
        await t.app.inject({ url: '/' }),
      );
      assert.deepEqual(index.documentation.users, {
        list: 'GET /api/v1/users',
        search: 'GET /api/v1/users/search',
        stats: 'GET /api/v1/users/stats',
        get: 'GET /api/v1/users/<id>',
        update: 'PUT /api/v1/users/<id>',
        create: 'POST /api/v1/users',
        delete: 'DELETE /api/v1/users/<id>',
      });
    });

    it('with user_admin disabled, create and delete answer 404 module_disabled and leave the index', async () => {
      await t.ctx.modules.set('user_admin', false);
      try {
        const create = await t.app.inject({
          method: 'POST',
          url: '/api/v1/users',
          headers: adminH,
          payload: { email: 'x@example.com' },
        });
        assert.equal(create.statusCode, 404);
        assert.equal(json(create).code, 'module_disabled');
        const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${bob.id}`, headers: adminH });
        assert.equal(json(del).code, 'module_disabled');
        const index = json<{ documentation: Record<string, Record<string, string>> }>(
          await t.app.inject({ url: '/' }),
        );
        assert.deepEqual(Object.keys(index.documentation.users ?? {}), [
          'list',
          'search',
          'stats',
          'get',
          'update',
        ]);
        // The users module itself still answers.
        assert.equal(
          (await t.app.inject({ url: `/api/v1/users/${bob.id}`, headers: adminH })).statusCode,
          200,
        );
      } finally {
        await t.ctx.modules.set('user_admin', true);
      }
    });
  });
}
