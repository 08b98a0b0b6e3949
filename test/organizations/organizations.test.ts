import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { count, orgApp, problem, userWithHeaders } from './helpers.ts';

type Org = {
  id: string;
  name: string;
  slug: string;
  domains: string[];
  join_by_domain: boolean;
  default_roles: string[];
  require_mfa: boolean;
  metadata: Record<string, unknown>;
  member_count: number;
  roles?: string[];
};

for (const dialect of DIALECTS) {
  describe(`organizations: create, list, get, update, delete [${dialect}]`, () => {
    let t: TestApp;
    let adminHeaders: { authorization: string };
    const create = (headers: Record<string, string>, payload: object) =>
      t.app.inject({ method: 'POST', url: '/api/v1/organizations', headers, payload });
    before(async () => {
      ({ t, adminHeaders } = await orgApp(dialect));
    });
    after(() => t.destroy());

    it('an admin creates with defaults and a slug from the name (-2 when taken), adding no member', async () => {
      const res = await create(adminHeaders, { name: 'Acme Corp, Inc.' });
      assert.equal(res.statusCode, 201);
      const org = json<Org>(res);
      assert.equal(res.headers.location, `/api/v1/organizations/${org.id}`);
      assert.equal(org.slug, 'acme-corp-inc');
      assert.deepEqual(
        { ...org, id: undefined, created_at: undefined, updated_at: undefined },
        {
          id: undefined,
          name: 'Acme Corp, Inc.',
          slug: 'acme-corp-inc',
          domains: [],
          join_by_domain: false,
          default_roles: ['member'],
          require_mfa: false,
          metadata: {},
          // docs/api.md §23: admin-only like domains.
          scim_group_roles: {},
          sso_required: false,
          member_count: 0,
          created_at: undefined,
          updated_at: undefined,
        },
      );
      assert.equal(json<Org>(await create(adminHeaders, { name: 'ACME corp inc' })).slug, 'acme-corp-inc-2');
      assert.equal(
        json<Org>(await create(adminHeaders, { name: 'acme   corp / inc' })).slug,
        'acme-corp-inc-3',
      );
      const long = json<Org>(await create(adminHeaders, { name: 'x'.repeat(200) }));
      assert.equal(long.slug.length, 63);
      const explicit = await create(adminHeaders, { name: 'Other', slug: 'acme-corp-inc' });
      assert.equal(problem(explicit).code, 'organization_exists');
      assert.equal(explicit.statusCode, 409);
      const audit = await t.ctx.db
        .selectFrom('audit_log')
        .select('action')
        .where('target_id', '=', org.id)
        .execute();
      assert.deepEqual(
        audit.map((a) => a.action),
        ['organization.created'],
      );
    });

    it('refuses bad input with problem+json and stores nothing', async () => {
      const before = await count(t, 'organizations');
      const cases: object[] = [
        {},
        { name: '' },
        { name: 'x'.repeat(201) },
        { name: 'ok', slug: 'Bad Slug' },
        { name: 'ok', slug: '-x' },
        { name: 'ok', slug: 'a'.repeat(64) },
        { name: 'ok', metadata: [] },
        { name: 'ok', metadata: { big: 'x'.repeat(4100) } },
        { name: 'ok', domains: ['not a domain'] },
        { name: 'ok', domains: ['localhost'] },
        { name: 'ok', default_roles: ['Not-A-Role'] },
        { name: 'ok', extra: true },
        { name: 'ok', join_by_domain: 'yes' },
      ];
      for (const payload of cases) {
        const res = await create(adminHeaders, payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 80));
        assert.equal(problem(res).code, 'validation_failed');
      }
      const unknownRole = await create(adminHeaders, { name: 'ok', default_roles: ['ghost'] });
      assert.equal(problem(unknownRole).code, 'role_not_found');
      assert.equal(await count(t, 'organizations'), before);
    });

    it('metadata up to 4096 bytes of UTF-8 is kept; domains are unique across organizations', async () => {
      const fits = { k: 'é'.repeat(2040) }; // {"k":"…"} = 8 + 4080 bytes
      const a = await create(adminHeaders, { name: 'Meta', metadata: fits, domains: ['Meta.Example'] });
      assert.equal(a.statusCode, 201, a.body);
      assert.deepEqual(json<Org>(a).metadata, fits);
      assert.deepEqual(json<Org>(a).domains, ['meta.example']);
      const b = await create(adminHeaders, { name: 'Meta two', domains: ['meta.example'] });
      assert.equal(problem(b).code, 'organization_exists');
      assert.equal(
        (await t.ctx.db.selectFrom('organizations').select('id').where('name', '=', 'Meta two').execute())
          .length,
        0,
      );
    });

    it('lists every organization to an admin, with q and keyset pages', async () => {
      for (let i = 0; i < 5; i++) await create(adminHeaders, { name: `Paged ${i}` });
      const all: Org[] = [];
      let cursor: string | null = null;
      do {
        const res: LightMyRequestResponse = await t.app.inject({
          url: '/api/v1/organizations',
          query: { limit: '2', q: 'PAGED', ...(cursor && { cursor }) },
          headers: adminHeaders,
        });
        assert.equal(res.statusCode, 200);
        const page = json<{ data: Org[]; next_cursor: string | null }>(res);
        assert.ok(page.data.length <= 2);
        all.push(...page.data);
        cursor = page.next_cursor;
      } while (cursor !== null);
      assert.deepEqual(
        all.map((o) => o.name),
        ['Paged 0', 'Paged 1', 'Paged 2', 'Paged 3', 'Paged 4'],
      );
      const bySlug = json<{ data: Org[] }>(
        await t.app.inject({ url: '/api/v1/organizations?q=paged-3', headers: adminHeaders }),
      );
      assert.deepEqual(
        bySlug.data.map((o) => o.name),
        ['Paged 3'],
      );
      // LIKE's wildcards are literal in q.
      assert.deepEqual(
        json<{ data: Org[] }>(
          await t.app.inject({ url: '/api/v1/organizations?q=%25', headers: adminHeaders }),
        ).data,
        [],
      );
      const bad = await t.app.inject({ url: '/api/v1/organizations?cursor=nonsense', headers: adminHeaders });
      assert.equal(problem(bad).code, 'validation_failed');
      assert.equal(
        problem(await t.app.inject({ url: '/api/v1/organizations?limit=0', headers: adminHeaders })).code,
        'validation_failed',
      );
    });

    it('a user sees only their own organizations, with roles; cannot create without self-service', async () => {
      const { user, headers } = await userWithHeaders(t);
      const mine = json<Org>(await create(adminHeaders, { name: 'Mine' }));
      await create(adminHeaders, { name: 'Not mine' });
      const put = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/organizations/${mine.id}/members/${user.id}`,
        headers: adminHeaders,
        payload: { roles: ['member'] },
      });
      assert.equal(put.statusCode, 201);
      const list = json<{ data: Org[]; next_cursor: null }>(
        await t.app.inject({ url: '/api/v1/organizations', headers }),
      );
      assert.deepEqual(
        list.data.map((o) => [o.name, o.roles, o.member_count]),
        [['Mine', ['member'], 1]],
      );
      const before = await count(t, 'organizations');
      assert.equal(problem(await create(headers, { name: 'Nope' })).code, 'forbidden');
      assert.equal(await count(t, 'organizations'), before);
    });

    it('PATCH: admin changes all; org:settings:manage all but domains (403); others 403/404', async () => {
      const org = json<Org>(await create(adminHeaders, { name: 'Patchable' }));
      const url = `/api/v1/organizations/${org.id}`;
      const owner = await userWithHeaders(t);
      const plain = await userWithHeaders(t);
      const outsider = await userWithHeaders(t);
      for (const [u, roles] of [
        [owner.user, ['owner']],
        [plain.user, ['member']],
      ] as const) {
        await t.app.inject({
          method: 'PUT',
          url: `${url}/members/${u.id}`,
          headers: adminHeaders,
          payload: { roles },
        });
      }
      const patched = await t.app.inject({
        method: 'PATCH',
        url,
        headers: owner.headers,
        payload: { name: 'Patched', metadata: { plan: 'pro' }, require_mfa: false, join_by_domain: true },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(json<Org>(patched).name, 'Patched');
      assert.equal(json<Org>(patched).slug, org.slug, 'the slug stays');
      assert.equal(
        problem(
          await t.app.inject({
            method: 'PATCH',
            url,
            headers: owner.headers,
            payload: { domains: ['x.example'] },
          }),
        ).code,
        'forbidden',
      );
      assert.equal(
        problem(await t.app.inject({ method: 'PATCH', url, headers: plain.headers, payload: { name: 'No' } }))
          .code,
        'forbidden',
      );
      assert.equal(
        problem(
          await t.app.inject({ method: 'PATCH', url, headers: outsider.headers, payload: { name: 'No' } }),
        ).code,
        'organization_not_found',
      );
      assert.equal(
        problem(await t.app.inject({ url, headers: outsider.headers })).code,
        'organization_not_found',
      );
      assert.equal(json<Org>(await t.app.inject({ url, headers: plain.headers })).name, 'Patched');
      const domains = await t.app.inject({
        method: 'PATCH',
        url,
        headers: adminHeaders,
        payload: { domains: ['patch.example'] },
      });
      assert.deepEqual(json<Org>(domains).domains, ['patch.example']);
      assert.equal(
        problem(await t.app.inject({ method: 'PATCH', url, headers: adminHeaders, payload: {} })).code,
        'validation_failed',
      );
      assert.equal(
        problem(
          await t.app.inject({
            method: 'PATCH',
            url,
            headers: adminHeaders,
            payload: { metadata: { big: 'x'.repeat(5000) } },
          }),
        ).code,
        'validation_failed',
      );
      const after = json<Org>(await t.app.inject({ url, headers: adminHeaders }));
      assert.equal(after.name, 'Patched');
      assert.deepEqual(after.metadata, { plan: 'pro' });
    });

    it('DELETE (admin) ends memberships and domains; others cannot', async () => {
      const org = json<Org>(await create(adminHeaders, { name: 'Doomed', domains: ['doomed.example'] }));
      const owner = await userWithHeaders(t);
      const url = `/api/v1/organizations/${org.id}`;
      await t.app.inject({
        method: 'PUT',
        url: `${url}/members/${owner.user.id}`,
        headers: adminHeaders,
        payload: { roles: ['owner'] },
      });
      assert.equal((await t.app.inject({ method: 'DELETE', url, headers: owner.headers })).statusCode, 403);
      assert.equal((await t.app.inject({ method: 'DELETE', url, headers: adminHeaders })).statusCode, 204);
      assert.equal(
        problem(await t.app.inject({ url, headers: adminHeaders })).code,
        'organization_not_found',
      );
      assert.equal(
        problem(await t.app.inject({ method: 'DELETE', url, headers: adminHeaders })).code,
        'organization_not_found',
      );
      const left = await t.ctx.db
        .selectFrom('organization_members')
        .selectAll()
        .where('organization_id', '=', org.id)
        .execute();
      assert.deepEqual(left, []);
      const domains = await t.ctx.db
        .selectFrom('organization_domains')
        .selectAll()
        .where('domain', '=', 'doomed.example')
        .execute();
      assert.deepEqual(domains, []);
    });
  });

  describe(`organizations: self-service creation [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      ({ t } = await orgApp(dialect, { ORGANIZATIONS_SELF_SERVICE: 'true' }));
    });
    after(() => t.destroy());

    it('any active user creates one and becomes a member with the creator roles; domains stay admin-only', async () => {
      const { user, headers } = await userWithHeaders(t);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/organizations',
        headers,
        payload: { name: 'Startup' },
      });
      assert.equal(res.statusCode, 201, res.body);
      const org = json<Org>(res);
      assert.equal(org.member_count, 1);
      const roles = json<{ organizations: Array<{ id: string; roles: string[] }> }>(
        await t.app.inject({ url: `/api/v1/users/${user.id}/roles`, headers }),
      );
      assert.deepEqual(roles.organizations, [{ id: org.id, slug: 'startup', roles: ['owner'] }]);
      const before = await count(t, 'organizations');
      const withDomains = await t.app.inject({
        method: 'POST',
        url: '/api/v1/organizations',
        headers,
        payload: { name: 'Grab', domains: ['gmail.com'] },
      });
      assert.equal(problem(withDomains).code, 'forbidden');
      assert.equal(await count(t, 'organizations'), before);
    });
  });
}
