import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSession } from '../../src/identity/sessions.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { count, orgApp, problem, userWithHeaders } from './helpers.ts';

type H = Record<string, string>;
type Member = {
  user: { id: string; email: string; name: string; status: string };
  roles: string[];
  joined_at: string;
};

for (const dialect of DIALECTS) {
  describe(`organizations: members [${dialect}]`, () => {
    let t: TestApp;
    let adminHeaders: H;
    const newOrg = async (name: string, extra: object = {}) =>
      json<{ id: string }>(
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/organizations',
          headers: adminHeaders,
          payload: { name, ...extra },
        }),
      ).id;
    const putMember = (headers: H, org: string, user: string, roles: string[]) =>
      t.app.inject({
        method: 'PUT',
        url: `/api/v1/organizations/${org}/members/${user}`,
        headers,
        payload: { roles },
      });
    const members = async (org: string) =>
      json<{ data: Member[] }>(
        await t.app.inject({ url: `/api/v1/organizations/${org}/members?limit=100`, headers: adminHeaders }),
      ).data;
    before(async () => {
      ({ t, adminHeaders } = await orgApp(dialect));
      await t.app.inject({
        method: 'PUT',
        url: '/api/v1/roles/reader',
        headers: adminHeaders,
        payload: { permissions: ['org:members:read'] },
      });
      await t.app.inject({
        method: 'PUT',
        url: '/api/v1/roles/manager',
        headers: adminHeaders,
        payload: { permissions: ['org:members:read', 'org:members:manage'] },
      });
    });
    after(() => t.destroy());

    it('admin adds (201), changes (200), lists in keyset pages, removes (204); member_count follows', async () => {
      const org = await newOrg('Members');
      const users: UserRow[] = [];
      for (let i = 0; i < 5; i++) {
        const { user } = await userWithHeaders(t);
        users.push(user);
        const res = await putMember(adminHeaders, org, user.id, ['member']);
        assert.equal(res.statusCode, 201);
        assert.deepEqual(json<Member>(res).roles, ['member']);
      }
      const changed = await putMember(adminHeaders, org, users[0]!.id, ['owner', 'member']);
      assert.equal(changed.statusCode, 200);
      assert.deepEqual(json<Member>(changed).roles, ['member', 'owner']);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/api/v1/organizations/${org}/members?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
        const page = json<{ data: Member[]; next_cursor: string | null }>(
          await t.app.inject({ url, headers: adminHeaders }),
        );
        seen.push(...page.data.map((m) => m.user.id));
        cursor = page.next_cursor;
      } while (cursor !== null);
      assert.deepEqual(
        seen,
        users.map((u) => u.id),
      );
      const one = (await members(org)).find((m) => m.user.id === users[0]!.id);
      assert.deepEqual(one?.user, {
        id: users[0]!.id,
        email: users[0]!.email,
        name: users[0]!.name,
        status: 'active',
      });
      const del = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${org}/members/${users[1]!.id}`,
        headers: adminHeaders,
      });
      assert.equal(del.statusCode, 204);
      const row = await t.ctx.db
        .selectFrom('organizations')
        .select('member_count')
        .where('id', '=', org)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.member_count), 4);
      const departed = await t.ctx.db
        .selectFrom('organization_departures')
        .selectAll()
        .where('organization_id', '=', org)
        .execute();
      assert.deepEqual(
        departed.map((d) => d.user_id),
        [users[1]!.id],
      );
      const actions = await t.ctx.db
        .selectFrom('audit_log')
        .select('action')
        .where('target_id', '=', org)
        .orderBy('at')
        .execute();
      assert.deepEqual([...new Set(actions.map((a) => a.action))].sort(), [
        'organization.created',
        'organization.member.added',
        'organization.member.removed',
        'organization.member.updated',
      ]);
    });

    it('refuses bad input with problem+json and stores nothing', async () => {
      const org = await newOrg('Bad input');
      const { user } = await userWithHeaders(t);
      const before = await count(t, 'organization_members');
      for (const payload of [
        {},
        { roles: 'owner' },
        { roles: ['Owner'] },
        { roles: ['a', 'a'] },
        { roles: [], x: 1 },
      ]) {
        const res = await t.app.inject({
          method: 'PUT',
          url: `/api/v1/organizations/${org}/members/${user.id}`,
          headers: adminHeaders,
          payload,
        });
        assert.equal(problem(res).code, 'validation_failed', JSON.stringify(payload));
      }
      assert.equal(problem(await putMember(adminHeaders, org, user.id, ['ghost'])).code, 'role_not_found');
      assert.equal(problem(await putMember(adminHeaders, org, 'no-such-user', ['member'])).status, 404);
      assert.equal(
        problem(
          await t.app.inject({ url: `/api/v1/organizations/${org}/members?cursor=x`, headers: adminHeaders }),
        ).code,
        'validation_failed',
      );
      assert.equal(await count(t, 'organization_members'), before);
    });

    it('the escalation guard: a manager hands out only roles whose permissions they hold there', async () => {
      const org = await newOrg('Guarded');
      const manager = await userWithHeaders(t);
      const target = await userWithHeaders(t);
      await putMember(adminHeaders, org, manager.user.id, ['manager']);
      await putMember(adminHeaders, org, target.user.id, ['member']);
      // Global roles do not count in the organization.
      await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${manager.user.id}/roles`,
        headers: adminHeaders,
        payload: { roles: ['owner'] },
      });
      const up = await putMember(manager.headers, org, target.user.id, ['owner']);
      assert.equal(problem(up).code, 'forbidden');
      const ok = await putMember(manager.headers, org, target.user.id, ['reader', 'member']);
      assert.equal(ok.statusCode, 200);
      const self = await putMember(manager.headers, org, manager.user.id, ['owner']);
      assert.equal(problem(self).code, 'forbidden', 'nor to themself');
      const reader = target;
      assert.equal(
        problem(await putMember(reader.headers, org, reader.user.id, ['member'])).code,
        'forbidden',
      );
      assert.deepEqual((await members(org)).find((m) => m.user.id === target.user.id)?.roles, [
        'member',
        'reader',
      ]);
      // A manager does not add people by user id (they join by invitation or domain): 404.
      const stranger = await userWithHeaders(t);
      assert.equal(problem(await putMember(manager.headers, org, stranger.user.id, ['member'])).status, 404);
      assert.equal((await members(org)).length, 2);
    });

    it('last_manager: the last member managing members cannot be demoted, removed or leave (admins may)', async () => {
      const org = await newOrg('Last');
      const owner = await userWithHeaders(t);
      const member = await userWithHeaders(t);
      await putMember(adminHeaders, org, owner.user.id, ['owner']);
      await putMember(adminHeaders, org, member.user.id, ['member']);
      const url = `/api/v1/organizations/${org}/members/${owner.user.id}`;
      assert.equal(
        problem(await putMember(owner.headers, org, owner.user.id, ['member'])).code,
        'last_manager',
      );
      assert.equal(
        problem(await t.app.inject({ method: 'DELETE', url, headers: owner.headers })).code,
        'last_manager',
      );
      // A member leaves on their own.
      const leave = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${org}/members/${member.user.id}`,
        headers: member.headers,
      });
      assert.equal(leave.statusCode, 204);
      // A plain member cannot remove someone else.
      await putMember(adminHeaders, org, member.user.id, ['member']);
      assert.equal(
        problem(await t.app.inject({ method: 'DELETE', url, headers: member.headers })).code,
        'forbidden',
      );
      // With a second owner, the first may step down.
      await putMember(adminHeaders, org, member.user.id, ['owner']);
      assert.equal((await putMember(owner.headers, org, owner.user.id, ['member'])).statusCode, 200);
      // Admins are exempt: the organization is then managed by admins only.
      assert.equal((await putMember(adminHeaders, org, member.user.id, ['member'])).statusCode, 200);
      assert.equal((await members(org)).filter((m) => m.roles.includes('owner')).length, 0);
    });

    it('tenancy: a manager of A using B’s ids (and B’s members’ ids) gets 404 and changes nothing', async () => {
      const a = await newOrg('Tenant A');
      const b = await newOrg('Tenant B', { domains: ['tenant-b.example'] });
      const managerA = await userWithHeaders(t);
      const ownerB = await userWithHeaders(t);
      const memberB = await userWithHeaders(t);
      await putMember(adminHeaders, a, managerA.user.id, ['owner']);
      await putMember(adminHeaders, b, ownerB.user.id, ['owner']);
      await putMember(adminHeaders, b, memberB.user.id, ['member']);
      const snapshot = async () => ({
        org: await t.app
          .inject({ url: `/api/v1/organizations/${b}`, headers: adminHeaders })
          .then((r) => r.body),
        members: JSON.stringify(await members(b)),
        aMembers: JSON.stringify(await members(a)),
        audit: await count(t, 'audit_log'),
      });
      const before = await snapshot();
      const h = managerA.headers;
      const calls: Array<[string, string, object?]> = [
        ['GET', `/api/v1/organizations/${b}`],
        ['PATCH', `/api/v1/organizations/${b}`, { name: 'Taken' }],
        ['DELETE', `/api/v1/organizations/${b}`],
        ['GET', `/api/v1/organizations/${b}/members`],
        ['PUT', `/api/v1/organizations/${b}/members/${memberB.user.id}`, { roles: ['owner'] }],
        ['PUT', `/api/v1/organizations/${b}/members/${managerA.user.id}`, { roles: ['owner'] }],
        ['DELETE', `/api/v1/organizations/${b}/members/${memberB.user.id}`],
        ['DELETE', `/api/v1/organizations/${b}/members/${ownerB.user.id}`],
        // A's id with B's members: not members of A.
        ['PUT', `/api/v1/organizations/${a}/members/${memberB.user.id}`, { roles: ['member'] }],
        ['DELETE', `/api/v1/organizations/${a}/members/${ownerB.user.id}`],
      ];
      for (const [method, url, payload] of calls) {
        const res = await t.app.inject({
          method: method as 'GET',
          url,
          headers: h,
          ...(payload && { payload }),
        });
        // Deleting an organization is admin-only whatever the id: 403 before any lookup.
        const expected = method === 'DELETE' && url === `/api/v1/organizations/${b}` ? 403 : 404;
        assert.equal(res.statusCode, expected, `${method} ${url}: ${res.body}`);
      }
      // Unknown and known-but-foreign organizations answer alike.
      const missing = await t.app.inject({
        url: '/api/v1/organizations/01890000-0000-7000-8000-000000000000',
        headers: h,
      });
      const foreign = await t.app.inject({ url: `/api/v1/organizations/${b}`, headers: h });
      assert.deepEqual(
        { ...json<Record<string, unknown>>(missing), instance: undefined, request_id: undefined },
        { ...json<Record<string, unknown>>(foreign), instance: undefined, request_id: undefined },
      );
      const list = json<{ data: Array<{ id: string }> }>(
        await t.app.inject({ url: '/api/v1/organizations', headers: h }),
      );
      assert.deepEqual(
        list.data.map((o) => o.id),
        [a],
      );
      assert.deepEqual(await snapshot(), before);
    });

    it('require_mfa: a member without a second factor in the session gets 403 mfa_required; with one, 200', async () => {
      const org = await newOrg('Strict', { require_mfa: true });
      const { user, headers } = await userWithHeaders(t);
      await putMember(adminHeaders, org, user.id, ['owner']);
      const url = `/api/v1/organizations/${org}`;
      for (const [method, path] of [
        ['GET', url],
        ['GET', `${url}/members`],
        ['PATCH', url],
      ] as const) {
        const res = await t.app.inject({
          method,
          url: path,
          headers,
          ...(method === 'PATCH' && { payload: { name: 'x' } }),
        });
        assert.equal(problem(res).code, 'mfa_required', `${method} ${path}`);
        assert.equal(json<{ mfa_token?: string }>(res).mfa_token, undefined);
      }
      const client = { ip: '127.0.0.1', userAgent: 'test' };
      for (const amr of [
        ['pwd', 'otp'],
        ['hwk', 'user'],
        ['pwd', 'mfa'],
      ]) {
        const { access_token } = await openSession(t.ctx, user, client, { amr });
        const res = await t.app.inject({ url, headers: { authorization: `Bearer ${access_token}` } });
        assert.equal(res.statusCode, 200, amr.join(','));
      }
      for (const amr of [['otp'], ['hwk'], ['fed']]) {
        const { access_token } = await openSession(t.ctx, user, client, { amr });
        const res = await t.app.inject({ url, headers: { authorization: `Bearer ${access_token}` } });
        assert.equal(problem(res).code, 'mfa_required', amr.join(','));
      }
      // Admins are not held to it; non-members still get 404 (no oracle).
      assert.equal((await t.app.inject({ url, headers: adminHeaders })).statusCode, 200);
      const outsider = await userWithHeaders(t);
      assert.equal(
        problem(await t.app.inject({ url, headers: outsider.headers })).code,
        'organization_not_found',
      );
      assert.equal(json<{ name: string }>(await t.app.inject({ url, headers: adminHeaders })).name, 'Strict');
    });
  });
}
