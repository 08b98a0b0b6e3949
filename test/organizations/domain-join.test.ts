import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';
import { orgApp } from './helpers.ts';

const PASSWORD = 'a long enough password 1234';

for (const dialect of DIALECTS) {
  describe(`organizations: joining by domain at sign-in [${dialect}]`, () => {
    let t: TestApp;
    let adminHeaders: Record<string, string>;
    let org: string;
    const login = (email: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/login', payload: { email, password: PASSWORD } });
    const membersOf = async () =>
      (
        await t.ctx.db
          .selectFrom('organization_members as m')
          .innerJoin('users as u', 'u.id', 'm.user_id')
          .select('u.email')
          .where('m.organization_id', '=', org)
          .execute()
      )
        .map((r) => r.email)
        .sort();
    before(async () => {
      ({ t, adminHeaders } = await orgApp(dialect));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/organizations',
        headers: adminHeaders,
        payload: {
          name: 'Domain Co',
          domains: ['domain.example'],
          join_by_domain: true,
          default_roles: ['member'],
        },
      });
      org = json<{ id: string }>(res).id;
    });
    after(() => t.destroy());

    it('a verified, active account at the domain joins with default_roles at its next sign-in; once', async () => {
      await createUser(t, { email: 'ann@domain.example', password: PASSWORD });
      assert.equal((await login('ann@domain.example')).statusCode, 200);
      assert.deepEqual(await membersOf(), ['ann@domain.example']);
      const roles = await t.ctx.db
        .selectFrom('organization_member_roles')
        .select('role')
        .where('organization_id', '=', org)
        .execute();
      assert.deepEqual(
        roles.map((r) => r.role),
        ['member'],
      );
      assert.equal((await login('ann@domain.example')).statusCode, 200);
      const row = await t.ctx.db
        .selectFrom('organizations')
        .select('member_count')
        .where('id', '=', org)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.member_count), 1);
      const audit = await t.ctx.db
        .selectFrom('audit_log')
        .select(['action', 'details'])
        .where('target_id', '=', org)
        .where('action', '=', 'organization.member.added')
        .execute();
      assert.equal(audit.length, 1);
      assert.equal(JSON.parse(audit[0]!.details).via, 'domain');
    });

    it('not for an unverified address, a subdomain, another domain, or while join_by_domain is off', async () => {
      const u = await createUser(t, { email: 'unverified@domain.example', password: PASSWORD });
      await t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', u.id).execute();
      await createUser(t, { email: 'sub@eu.domain.example', password: PASSWORD });
      await createUser(t, { email: 'other@elsewhere.example', password: PASSWORD });
      for (const email of ['unverified@domain.example', 'sub@eu.domain.example', 'other@elsewhere.example']) {
        assert.equal((await login(email)).statusCode, 200, email);
      }
      await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/organizations/${org}`,
        headers: adminHeaders,
        payload: { join_by_domain: false },
      });
      await createUser(t, { email: 'late@domain.example', password: PASSWORD });
      assert.equal((await login('late@domain.example')).statusCode, 200);
      assert.deepEqual(await membersOf(), ['ann@domain.example']);
      await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/organizations/${org}`,
        headers: adminHeaders,
        payload: { join_by_domain: true },
      });
      assert.equal((await login('late@domain.example')).statusCode, 200);
      assert.deepEqual(await membersOf(), ['ann@domain.example', 'late@domain.example']);
    });

    it('someone who left or was removed does not rejoin by domain', async () => {
      const ann = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', 'ann@domain.example')
        .executeTakeFirstOrThrow();
      const tokens = json<{ access_token: string }>(await login('ann@domain.example'));
      const leave = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${org}/members/${ann.id}`,
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(leave.statusCode, 204);
      assert.equal((await login('ann@domain.example')).statusCode, 200);
      assert.deepEqual(await membersOf(), ['late@domain.example']);
    });

    it('does nothing while the module is off', async () => {
      // docs/api.md §23: sso needs organizations, so it goes off first (else 409 module_in_use).
      const ssoOff = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/sso',
        headers: adminHeaders,
        payload: { enabled: false },
      });
      assert.equal(ssoOff.statusCode, 200, ssoOff.body);
      const off = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/organizations',
        headers: adminHeaders,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      await createUser(t, { email: 'off@domain.example', password: PASSWORD });
      assert.equal((await login('off@domain.example')).statusCode, 200);
      assert.deepEqual(await membersOf(), ['late@domain.example']);
    });
  });
}
