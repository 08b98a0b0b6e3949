import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { count, orgApp, problem, userWithHeaders } from './helpers.ts';

for (const dialect of DIALECTS) {
  describe(`organizations: the role catalogue and global roles [${dialect}]`, () => {
    let t: TestApp;
    let admin: UserRow;
    let adminHeaders: { authorization: string };
    before(async () => {
      ({ t, admin, adminHeaders } = await orgApp(dialect));
    });
    after(() => t.destroy());

    it('lists, creates (201), replaces (200) and deletes (204) a role', async () => {
      const list = await t.app.inject({ url: '/api/v1/roles', headers: adminHeaders });
      assert.equal(list.statusCode, 200);
      assert.deepEqual(
        json<{ data: Array<{ name: string }> }>(list).data.map((r) => r.name),
        ['member', 'owner'],
      );
      const put = (body: unknown) =>
        t.app.inject({
          method: 'PUT',
          url: '/api/v1/roles/billing',
          headers: adminHeaders,
          payload: body as object,
        });
      const made = await put({ description: 'Pays', permissions: ['invoices:read', 'org:members:read'] });
      assert.equal(made.statusCode, 201);
      assert.deepEqual(json(made), {
        name: 'billing',
        description: 'Pays',
        permissions: ['invoices:read', 'org:members:read'],
      });
      const replaced = await put({ permissions: ['invoices:write'] });
      assert.equal(replaced.statusCode, 200);
      assert.deepEqual(json(replaced), { name: 'billing', description: '', permissions: ['invoices:write'] });
      const del = await t.app.inject({
        method: 'DELETE',
        url: '/api/v1/roles/billing',
        headers: adminHeaders,
      });
      assert.equal(del.statusCode, 204);
      assert.equal(
        problem(await t.app.inject({ method: 'DELETE', url: '/api/v1/roles/billing', headers: adminHeaders }))
          .code,
        'role_not_found',
      );
      const actions = await t.ctx.db
        .selectFrom('audit_log')
        .select('action')
        .where('target_id', '=', 'billing')
        .execute();
      assert.deepEqual(actions.map((a) => a.action).sort(), ['role.delete', 'role.put', 'role.put']);
    });

    it('refuses bad names and permissions with 400 validation_failed, storing nothing', async () => {
      const before = await count(t, 'roles');
      for (const [name, body] of [
        ['admin', { permissions: [] }],
        ['user', { permissions: [] }],
        ['Bad', { permissions: [] }],
        ['9lives', { permissions: [] }],
        ['ok', { permissions: ['org:everything'] }],
        ['ok', { permissions: ['Has Space'] }],
        ['ok', { permissions: ['a', 'a'] }],
        ['ok', {}],
        ['ok', { permissions: [], extra: 1 }],
      ] as const) {
        const res = await t.app.inject({
          method: 'PUT',
          url: `/api/v1/roles/${name}`,
          headers: adminHeaders,
          payload: body,
        });
        assert.equal(res.statusCode, 400, `${name} ${JSON.stringify(body)}`);
        assert.equal(problem(res).code, 'validation_failed');
      }
      assert.equal(await count(t, 'roles'), before);
    });

    it('is admin only', async () => {
      const { headers } = await userWithHeaders(t);
      for (const [method, url] of [
        ['GET', '/api/v1/roles'],
        ['PUT', '/api/v1/roles/x'],
        ['DELETE', '/api/v1/roles/owner'],
      ] as const) {
        const res = await t.app.inject({
          method,
          url,
          headers,
          payload: method === 'PUT' ? { permissions: [] } : undefined,
        });
        assert.equal(res.statusCode, 403, `${method} ${url}`);
      }
      assert.equal(await count(t, 'roles'), 2);
    });

    it('sets and reads global roles; role_in_use while held; role_not_found for unknown names', async () => {
      const { user, headers } = await userWithHeaders(t);
      const url = `/api/v1/users/${user.id}/roles`;
      const set = await t.app.inject({
        method: 'PUT',
        url,
        headers: adminHeaders,
        payload: { roles: ['member'] },
      });
      assert.equal(set.statusCode, 200);
      assert.deepEqual(json(set), { roles: ['member'], organizations: [] });
      // The user reads their own; another user may not.
      assert.deepEqual(json(await t.app.inject({ url, headers })), { roles: ['member'], organizations: [] });
      const other = await userWithHeaders(t);
      assert.equal(problem(await t.app.inject({ url, headers: other.headers })).code, 'forbidden');
      assert.equal(
        problem(await t.app.inject({ method: 'PUT', url, headers, payload: { roles: [] } })).status,
        403,
      );

      assert.equal(
        problem(await t.app.inject({ method: 'DELETE', url: '/api/v1/roles/member', headers: adminHeaders }))
          .code,
        'role_in_use',
      );
      const unknown = await t.app.inject({
        method: 'PUT',
        url,
        headers: adminHeaders,
        payload: { roles: ['member', 'ghost'] },
      });
      assert.equal(problem(unknown).code, 'role_not_found');
      assert.equal(unknown.statusCode, 404);
      const bad = await t.app.inject({
        method: 'PUT',
        url,
        headers: adminHeaders,
        payload: { roles: 'member' },
      });
      assert.equal(problem(bad).code, 'validation_failed');
      assert.deepEqual(json(await t.app.inject({ url, headers })).roles, ['member'], 'nothing changed');
      assert.equal(
        problem(await t.app.inject({ url: '/api/v1/users/nope/roles', headers: adminHeaders })).status,
        404,
      );

      const cleared = await t.app.inject({
        method: 'PUT',
        url,
        headers: adminHeaders,
        payload: { roles: [] },
      });
      assert.deepEqual(json(cleared).roles, []);
      const audit = await t.ctx.db
        .selectFrom('audit_log')
        .select(['action', 'actor_id'])
        .where('target_id', '=', user.id)
        .where('action', '=', 'user.roles_change')
        .execute();
      assert.equal(audit.length, 2);
      assert.equal(audit[0]?.actor_id, admin.id);
    });
  });
}
