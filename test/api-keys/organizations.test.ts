import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { revokeOrphanedOrganizationKeys } from '../../src/modules/api-keys/api-keys.service.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { FULL, keyHeaders, makeKey, problemCode, rowCount } from './helpers.ts';

type Verify = {
  valid: boolean;
  reason?: string;
  owner?: Record<string, unknown>;
  roles?: string[];
  scopes?: unknown;
};

for (const dialect of DIALECTS) {
  describe(`api keys: organization keys [${dialect}]`, () => {
    let t: TestApp;
    let admin: Record<string, string>;
    let org: string;
    let manager: Record<string, string>;
    let member: Record<string, string>;
    let outsider: Record<string, string>;
    before(async () => {
      t = await buildTestApp(dialect, { env: FULL });
      admin = await authHeaders(t, await firstAdmin(t));
      for (const [name, permissions] of [
        ['settings', ['org:settings:manage']],
        ['reader', ['org:members:read']],
      ] as const) {
        const res = await t.app.inject({
          method: 'PUT',
          url: `/api/v1/roles/${name}`,
          headers: admin,
          payload: { permissions },
        });
        assert.ok(res.statusCode < 300, res.body);
      }
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/organizations',
        headers: admin,
        payload: { name: 'Acme', metadata: { plan: 'gold' } },
      });
      assert.equal(created.statusCode, 201, created.body);
      org = json<{ id: string }>(created).id;
      const m = await createUser(t, { email: 'manager@acme.test' });
      const r = await createUser(t, { email: 'reader@acme.test' });
      for (const [u, roles] of [
        [m, ['settings']],
        [r, ['reader']],
      ] as const) {
        const res = await t.app.inject({
          method: 'PUT',
          url: `/api/v1/organizations/${org}/members/${u.id}`,
          headers: admin,
          payload: { roles },
        });
        assert.ok(res.statusCode < 300, res.body);
      }
      manager = await authHeaders(t, m);
      member = await authHeaders(t, r);
      outsider = await authHeaders(t, await createUser(t, { email: 'outsider@else.test' }));
    });
    after(() => t.destroy());

    it('needs org:settings:manage there (or admin): a non-member 404, a member 403, nothing stored', async () => {
      const before = await rowCount(t, 'api_keys');
      const asOutsider = await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: outsider,
        payload: { name: 'x', organization_id: org },
      });
      assert.equal(asOutsider.statusCode, 404);
      assert.equal(problemCode(asOutsider), 'organization_not_found');
      const asMember = await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: member,
        payload: { name: 'x', organization_id: org },
      });
      assert.equal(asMember.statusCode, 403);
      assert.equal(problemCode(asMember), 'forbidden');
      const unknown = await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: admin,
        payload: { name: 'x', organization_id: '01900000-0000-7000-8000-000000000000' },
      });
      assert.equal(problemCode(unknown), 'organization_not_found');
      assert.equal(await rowCount(t, 'api_keys'), before);
      const listOther = await t.app.inject({
        method: 'GET',
        url: `/api/v1/api-keys?owner=organization:${org}`,
        headers: member,
      });
      assert.equal(listOther.statusCode, 403);
    });

    it("a manager's organization key: verified with the organization as owner (no metadata), refused on /api/v1", async () => {
      const key = await makeKey(t, manager, { name: 'acme integration', organization_id: org });
      assert.deepEqual(key.owner, { type: 'organization', id: org });
      const listed = json<{ data: Array<{ id: string }> }>(
        await t.app.inject({
          method: 'GET',
          url: `/api/v1/api-keys?owner=organization:${org}`,
          headers: manager,
        }),
      );
      assert.ok(listed.data.some((k) => k.id === key.id));
      const v = json<Verify>(
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/api-keys/verify',
          headers: admin,
          payload: { key: key.key },
        }),
      );
      assert.equal(v.valid, true);
      assert.equal(v.owner?.id, org);
      assert.equal(v.owner?.slug, 'acme');
      assert.equal('metadata' in (v.owner ?? {}), false);
      assert.deepEqual(v.roles, []);
      const use = await t.app.inject({ method: 'GET', url: '/api/v1/profile', headers: keyHeaders(key.key) });
      assert.equal(use.statusCode, 401);
      assert.equal(problemCode(use), 'token_invalid');
      // The organization's deletion revokes it: at once in verify, and marked with its event by the hook.
      assert.equal(
        (await t.app.inject({ method: 'DELETE', url: `/api/v1/organizations/${org}`, headers: admin }))
          .statusCode,
        204,
      );
      const after = json<Verify>(
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/api-keys/verify',
          headers: admin,
          payload: { key: key.key },
        }),
      );
      assert.deepEqual(after, { valid: false, reason: 'revoked' });
      assert.equal(await revokeOrphanedOrganizationKeys(t.ctx), 1);
      const row = await t.ctx.db
        .selectFrom('api_keys')
        .select('revoked_at')
        .where('id', '=', key.id)
        .executeTakeFirstOrThrow();
      assert.ok(row.revoked_at !== null);
      const audit = await t.ctx.db
        .selectFrom('audit_log')
        .select('target_id')
        .where('action', '=', 'api_key.revoke')
        .execute();
      assert.ok(audit.some((a) => a.target_id === key.id));
    });

    it("a user's key verifies with the user's global roles", async () => {
      const bot = await t.app.inject({
        method: 'POST',
        url: '/api/v1/service-accounts',
        headers: admin,
        payload: { name: 'reporter', roles: ['reader'] },
      });
      assert.equal(bot.statusCode, 201, bot.body);
      const id = json<{ id: string }>(bot).id;
      const key = await makeKey(t, admin, { user_id: id });
      const v = json<Verify>(
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/api-keys/verify',
          headers: admin,
          payload: { key: key.key },
        }),
      );
      assert.deepEqual(v.roles, ['reader']);
    });
  });
}
