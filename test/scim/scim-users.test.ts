import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, sessionFor } from '../helpers/users.ts';
import {
  entraUser,
  oktaUser,
  patchOp,
  type ScimOrg,
  scim,
  scimApp,
  scimError,
  scimOrg,
  USER_SCHEMA,
} from './helpers.ts';

interface ScimUser {
  id: string;
  userName: string;
  externalId?: string;
  active: boolean;
  name: { formatted: string };
  meta: { location: string };
}
interface ListResponse<T> {
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: T[];
}

for (const dialect of DIALECTS) {
  describe(`scim: Users [${dialect}]`, () => {
    let t: TestApp;
    let admin: { authorization: string };
    let acme: ScimOrg;
    let globex: ScimOrg;

    before(async () => {
      ({ t, admin } = await scimApp(dialect));
      acme = await scimOrg(t, admin, { name: 'Acme', domains: ['acme.example'], default_roles: ['member'] });
      globex = await scimOrg(t, admin, { name: 'Globex', domains: ['globex.example'] });
    });
    after(async () => {
      await t?.destroy();
    });

    const user = async (org: ScimOrg, id: string) =>
      json<ScimUser>(await scim(t, org, 'GET', `/Users/${id}`));
    const rolesIn = async (orgId: string, userId: string) =>
      (
        await t.ctx.db
          .selectFrom('organization_member_roles')
          .select('role')
          .where('organization_id', '=', orgId)
          .where('user_id', '=', userId)
          .orderBy('role')
          .execute()
      ).map((r) => r.role);

    it("Okta's create: 201 with the resource; the person joins with default_roles; verified at the domains", async () => {
      const res = await scim(t, acme, 'POST', '/Users', oktaUser('test.user@acme.example'));
      assert.equal(res.statusCode, 201, res.body);
      assert.match(String(res.headers['content-type']), /^application\/scim\+json/);
      const body = json<ScimUser>(res);
      assert.equal(body.userName, 'test.user@acme.example');
      assert.equal(body.externalId, '00ujl29u0le5T6Aj10h7');
      assert.equal(body.active, true);
      // No name.formatted, a displayName: the displayName names the person.
      assert.equal(body.name.formatted, 'Test User');
      assert.equal(res.headers.location, body.meta.location);
      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', body.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.email_verified, 1);
      assert.equal(row.password_hash, null, 'a SCIM password is ignored');
      assert.equal(row.created_via, 'scim');
      assert.deepEqual(await rolesIn(acme.id, body.id), ['member']);
      const created = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'user.create')
        .where('target_id', '=', body.id)
        .executeTakeFirstOrThrow();
      assert.match(created.details, /"via":"scim"/);
      // The webhook events (via: scim): test/scim/scim-events.test.ts.
    });

    it('Entra ID\'s create and its filters: userName eq, emails[type eq "work"].value eq, externalId eq', async () => {
      const res = await scim(
        t,
        acme,
        'POST',
        '/Users',
        entraUser('Entra.Person@acme.example', 'entra-ext-1'),
      );
      assert.equal(res.statusCode, 201, res.body);
      const id = json<ScimUser>(res).id;
      assert.equal(json<ScimUser>(res).name.formatted, 'givenName familyName');
      for (const filter of [
        'userName eq "entra.person@acme.example"',
        'emails[type eq "work"].value eq "Entra.Person@acme.example"',
        'externalId eq "entra-ext-1"',
      ]) {
        const list = await scim(t, acme, 'GET', `/Users?filter=${encodeURIComponent(filter)}`);
        assert.equal(list.statusCode, 200, list.body);
        const page = json<ListResponse<ScimUser>>(list);
        assert.equal(page.totalResults, 1, filter);
        assert.equal(page.Resources[0]?.id, id, filter);
      }
      const none = json<ListResponse<ScimUser>>(
        await scim(
          t,
          acme,
          'GET',
          `/Users?filter=${encodeURIComponent('userName eq "nobody@acme.example"')}`,
        ),
      );
      assert.equal(none.totalResults, 0);
      assert.deepEqual(none.Resources, []);
    });

    it('an existing account at the domains joins; one elsewhere is 409 uniqueness; a second create is 409', async () => {
      const existing = await createUser(t, { email: 'old.hand@acme.example' });
      const joined = await scim(t, acme, 'POST', '/Users', oktaUser('old.hand@acme.example', 'x1'));
      assert.equal(joined.statusCode, 201, joined.body);
      assert.equal(json<ScimUser>(joined).id, existing.id);
      scimError(
        await scim(t, acme, 'POST', '/Users', oktaUser('old.hand@acme.example', 'x1')),
        409,
        'uniqueness',
      );
      await createUser(t, { email: 'personal@gmail.example' });
      const foreign = await scim(t, acme, 'POST', '/Users', oktaUser('personal@gmail.example', 'x2'));
      scimError(foreign, 409, 'uniqueness');
    });

    it('tenancy: a token sees and changes only its organization (crossed ids: 404)', async () => {
      const mine = json<ScimUser>(
        await scim(t, globex, 'POST', '/Users', oktaUser('wile@globex.example', 'g1')),
      );
      const theirs = json<ListResponse<ScimUser>>(await scim(t, acme, 'GET', '/Users?count=1000'));
      assert.ok(theirs.Resources.length > 0);
      for (const u of theirs.Resources) {
        scimError(await scim(t, globex, 'GET', `/Users/${u.id}`), 404);
        scimError(
          await scim(
            t,
            globex,
            'PATCH',
            `/Users/${u.id}`,
            patchOp({ op: 'replace', value: { active: false } }),
          ),
          404,
        );
        scimError(await scim(t, globex, 'PUT', `/Users/${u.id}`, oktaUser(u.userName)), 404);
        scimError(await scim(t, globex, 'DELETE', `/Users/${u.id}`), 404);
      }
      scimError(await scim(t, acme, 'GET', `/Users/${mine.id}`), 404);
      const filtered = json<ListResponse<ScimUser>>(
        await scim(
          t,
          acme,
          'GET',
          `/Users?filter=${encodeURIComponent('userName eq "wile@globex.example"')}`,
        ),
      );
      assert.equal(filtered.totalResults, 0);
      const all = json<ListResponse<ScimUser>>(await scim(t, globex, 'GET', '/Users'));
      assert.deepEqual(
        all.Resources.map((u) => u.id),
        [mine.id],
      );
    });

    it('paging: count defaults to 100, at most 1000; startIndex below 1 means 1', async () => {
      const all = json<ListResponse<ScimUser>>(await scim(t, acme, 'GET', '/Users'));
      assert.equal(all.startIndex, 1);
      assert.equal(all.itemsPerPage, all.Resources.length);
      const first = json<ListResponse<ScimUser>>(await scim(t, acme, 'GET', '/Users?startIndex=0&count=1'));
      assert.equal(first.startIndex, 1);
      assert.equal(first.Resources.length, 1);
      const second = json<ListResponse<ScimUser>>(await scim(t, acme, 'GET', '/Users?startIndex=2&count=1'));
      assert.notEqual(second.Resources[0]?.id, first.Resources[0]?.id);
      assert.equal(second.totalResults, all.totalResults);
      const big = await scim(t, acme, 'GET', '/Users?count=5000');
      assert.equal(big.statusCode, 200);
      scimError(await scim(t, acme, 'GET', '/Users?count=abc'), 400, 'invalidValue');
    });

    it('PATCH as Entra ID sends it ("Replace", active "False") deactivates: membership and org sessions end, the account at the domains is disabled', async () => {
      const created = json<ScimUser>(
        await scim(t, acme, 'POST', '/Users', oktaUser('road.runner@acme.example', 'rr')),
      );
      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      await sessionFor(t, row);
      const res = await scim(
        t,
        acme,
        'PATCH',
        `/Users/${created.id}`,
        patchOp({ op: 'Replace', path: 'active', value: 'False' }),
      );
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json<ScimUser>(res).active, false);
      assert.deepEqual(await rolesIn(acme.id, created.id), []);
      const after = await t.ctx.db
        .selectFrom('users')
        .select('status')
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.equal(after.status, 'disabled');
      const live = await t.ctx.db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', created.id)
        .where('revoked_at', 'is', null)
        .execute();
      assert.deepEqual(live, []);
      const disabled = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'user.status_change')
        .where('target_id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.match(disabled.details, /"via":"scim"/);
      // Still shown to the organization (the IdP reactivates it), as inactive.
      assert.equal((await user(acme, created.id)).active, false);
      // Okta's reactivation: the membership comes back with the roles it had, the account enabled.
      const back = await scim(
        t,
        acme,
        'PATCH',
        `/Users/${created.id}`,
        patchOp({ op: 'replace', value: { active: true } }),
      );
      assert.equal(back.statusCode, 200, back.body);
      assert.equal(json<ScimUser>(back).active, true);
      assert.deepEqual(await rolesIn(acme.id, created.id), ['member']);
    });

    it('deactivating a person outside the domains ends the membership and the sessions carrying org_id only', async () => {
      const outsider = await createUser(t, { email: 'consultant@outside.example' });
      await t.app.inject({
        method: 'PUT',
        url: `/api/v1/organizations/${acme.id}/members/${outsider.id}`,
        headers: admin,
        payload: { roles: ['member'] },
      });
      await authHeaders(t, outsider);
      await authHeaders(t, outsider);
      const sessions = await t.ctx.db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', outsider.id)
        .execute();
      assert.equal(sessions.length, 2);
      const carrying = sessions[0]?.id as string;
      await t.ctx.db
        .insertInto('oauth_grant_organizations')
        .values({ grant_id: carrying, organization_id: acme.id, updated_at: Date.now() })
        .execute();
      const res = await scim(
        t,
        acme,
        'PATCH',
        `/Users/${outsider.id}`,
        patchOp({ op: 'replace', path: 'active', value: false }),
      );
      assert.equal(res.statusCode, 200, res.body);
      const rows = await t.ctx.db
        .selectFrom('sessions')
        .select(['id', 'revoked_at'])
        .where('user_id', '=', outsider.id)
        .execute();
      for (const s of rows) assert.equal(s.revoked_at !== null, s.id === carrying, s.id);
      const account = await t.ctx.db
        .selectFrom('users')
        .select('status')
        .where('id', '=', outsider.id)
        .executeTakeFirstOrThrow();
      assert.equal(account.status, 'active', 'an account outside the domains is not disabled');
      // Its address is its owner's: the organization's IdP cannot move it.
      scimError(
        await scim(
          t,
          acme,
          'PATCH',
          `/Users/${outsider.id}`,
          patchOp({ op: 'replace', path: 'userName', value: 'x@acme.example' }),
        ),
        400,
        'mutability',
      );
    });

    it('PATCH name and userName (a path, a value object); userName changes the address, verified at the domains', async () => {
      const created = json<ScimUser>(
        await scim(t, acme, 'POST', '/Users', entraUser('bugs@acme.example', 'bb')),
      );
      const res = await scim(
        t,
        acme,
        'PATCH',
        `/Users/${created.id}`,
        patchOp(
          { op: 'Replace', path: 'userName', value: 'bugs.bunny@acme.example' },
          { op: 'replace', value: { 'name.formatted': 'Bugs Bunny' } },
        ),
      );
      assert.equal(res.statusCode, 200, res.body);
      const body = json<ScimUser>(res);
      assert.equal(body.userName, 'bugs.bunny@acme.example');
      assert.equal(body.name.formatted, 'Bugs Bunny');
      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.email, 'bugs.bunny@acme.example');
      assert.equal(row.email_verified, 1);
      const given = await scim(
        t,
        acme,
        'PATCH',
        `/Users/${created.id}`,
        patchOp(
          { op: 'Add', path: 'name.givenName', value: 'Barbara' },
          { op: 'Add', path: 'name.familyName', value: 'Jensen' },
        ),
      );
      assert.equal(json<ScimUser>(given).name.formatted, 'Barbara Jensen');
      scimError(
        await scim(
          t,
          acme,
          'PATCH',
          `/Users/${created.id}`,
          patchOp({ op: 'replace', path: 'userName', value: 'test.user@acme.example' }),
        ),
        409,
        'uniqueness',
      );
      const outside = await scim(
        t,
        acme,
        'PATCH',
        `/Users/${created.id}`,
        patchOp({ op: 'replace', path: 'userName', value: 'bb@elsewhere.example' }),
      );
      assert.equal(outside.statusCode, 200, outside.body);
      const moved = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.equal(moved.email_verified, 0, 'an address outside the domains is not verified');
    });

    it('regression: a SCIM user whose membership an admin ended is restored by active: true (it stayed out)', async () => {
      const created = json<ScimUser>(
        await scim(t, acme, 'POST', '/Users', oktaUser('porky@acme.example', 'pp')),
      );
      const removed = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${acme.id}/members/${created.id}`,
        headers: admin,
      });
      assert.equal(removed.statusCode, 204, removed.body);
      assert.equal((await user(acme, created.id)).active, false);
      const back = await scim(
        t,
        acme,
        'PATCH',
        `/Users/${created.id}`,
        patchOp({ op: 'replace', path: 'active', value: true }),
      );
      assert.equal(json<ScimUser>(back).active, true, back.body);
      assert.deepEqual(await rolesIn(acme.id, created.id), ['member']);
    });

    it('PUT replaces; DELETE deprovisions (404 afterwards)', async () => {
      const created = json<ScimUser>(
        await scim(t, acme, 'POST', '/Users', oktaUser('daffy@acme.example', 'dd')),
      );
      const put = await scim(t, acme, 'PUT', `/Users/${created.id}`, {
        ...oktaUser('daffy@acme.example', 'dd2'),
        name: { formatted: 'Daffy Duck' },
      });
      assert.equal(put.statusCode, 200, put.body);
      assert.equal(json<ScimUser>(put).name.formatted, 'Daffy Duck');
      assert.equal(json<ScimUser>(put).externalId, 'dd2');
      const del = await scim(t, acme, 'DELETE', `/Users/${created.id}`);
      assert.equal(del.statusCode, 204, del.body);
      scimError(await scim(t, acme, 'GET', `/Users/${created.id}`), 404);
      const row = await t.ctx.db
        .selectFrom('users')
        .select('status')
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'disabled');
    });

    it('every error shape: 401 with WWW-Authenticate: Bearer, invalidFilter, invalidValue, invalidSyntax, 404', async () => {
      for (const authorization of [undefined, 'Bearer nope', 'Basic abc', `Bearer gscim_${'A'.repeat(38)}`]) {
        const res = await t.app.inject({
          url: '/scim/v2/Users',
          headers: authorization ? { authorization } : {},
        });
        scimError(res, 401);
        assert.equal(res.headers['www-authenticate'], 'Bearer');
      }
      for (const filter of [
        'userName sw "a"',
        'displayName eq "x"',
        'userName eq',
        'name.familyName eq "x" or userName eq "y"',
      ]) {
        scimError(
          await scim(t, acme, 'GET', `/Users?filter=${encodeURIComponent(filter)}`),
          400,
          'invalidFilter',
        );
      }
      scimError(
        await scim(t, acme, 'POST', '/Users', { schemas: [USER_SCHEMA], userName: 'not-an-address' }),
        400,
        'invalidValue',
      );
      scimError(await scim(t, acme, 'POST', '/Users', { schemas: [USER_SCHEMA] }), 400, 'invalidValue');
      scimError(
        await scim(t, acme, 'POST', '/Users', { ...oktaUser('z@acme.example'), active: 'maybe' }),
        400,
        'invalidValue',
      );
      const broken = await t.app.inject({
        method: 'POST',
        url: '/scim/v2/Users',
        headers: { authorization: `Bearer ${acme.token}`, 'content-type': 'application/scim+json' },
        payload: '{"userName": ',
      });
      scimError(broken, 400, 'invalidSyntax');
      scimError(await scim(t, acme, 'PATCH', '/Users/whatever', { Operations: [] }), 404);
      const someone = json<ListResponse<ScimUser>>(await scim(t, acme, 'GET', '/Users?count=1'))
        .Resources[0] as ScimUser;
      scimError(
        await scim(t, acme, 'PATCH', `/Users/${someone.id}`, { Operations: [] }),
        400,
        'invalidSyntax',
      );
      scimError(
        await scim(t, acme, 'PATCH', `/Users/${someone.id}`, patchOp({ op: 'move', path: 'active' })),
        400,
        'invalidSyntax',
      );
      scimError(await scim(t, acme, 'GET', '/Users/00000000-0000-0000-0000-000000000000'), 404);
    });

    it('discovery: ServiceProviderConfig, ResourceTypes, Schemas', async () => {
      const spc = await scim(t, acme, 'GET', '/ServiceProviderConfig');
      assert.equal(spc.statusCode, 200);
      assert.equal(json<{ patch: { supported: boolean } }>(spc).patch.supported, true);
      const types = json<ListResponse<{ id: string }>>(await scim(t, acme, 'GET', '/ResourceTypes'));
      assert.deepEqual(
        types.Resources.map((r) => r.id),
        ['User', 'Group'],
      );
      const schema = await scim(t, acme, 'GET', `/Schemas/${USER_SCHEMA}`);
      assert.equal(schema.statusCode, 200);
    });

    it('the token: shown once, replaced by a new one, revoked; a non-member 404, a member without the permission 403', async () => {
      const before = acme.token;
      const next = await t.app.inject({
        method: 'POST',
        url: `/api/v1/organizations/${acme.id}/scim-token`,
        headers: admin,
      });
      assert.equal(next.statusCode, 201);
      const body = json<{ token: string; created_at: string }>(next);
      assert.match(body.token, /^gscim_[0-9A-Za-z]{38}$/);
      scimError(await scim(t, { token: before }, 'GET', '/Users'), 401);
      acme.token = body.token;
      assert.equal((await scim(t, acme, 'GET', '/Users')).statusCode, 200);
      const stored = await t.ctx.db
        .selectFrom('scim_tokens')
        .selectAll()
        .where('organization_id', '=', acme.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(stored.token_hash, body.token);
      const stranger = await authHeaders(t, await createUser(t));
      const refused = await t.app.inject({
        method: 'POST',
        url: `/api/v1/organizations/${acme.id}/scim-token`,
        headers: stranger,
      });
      assert.equal(refused.statusCode, 404);
      const plain = await createUser(t);
      await t.app.inject({
        method: 'PUT',
        url: `/api/v1/organizations/${acme.id}/members/${plain.id}`,
        headers: admin,
        payload: { roles: ['member'] },
      });
      const forbidden = await t.app.inject({
        method: 'POST',
        url: `/api/v1/organizations/${acme.id}/scim-token`,
        headers: await authHeaders(t, plain),
      });
      assert.equal(forbidden.statusCode, 403);
      const revoked = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${acme.id}/scim-token`,
        headers: admin,
      });
      assert.equal(revoked.statusCode, 204);
      scimError(await scim(t, acme, 'GET', '/Users'), 401);
      acme = {
        ...acme,
        token: json<{ token: string }>(
          await t.app.inject({
            method: 'POST',
            url: `/api/v1/organizations/${acme.id}/scim-token`,
            headers: admin,
          }),
        ).token,
      };
    });

    it('off while sso is off: /scim/v2/* answers 404', async () => {
      const off = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/sso',
        headers: admin,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      scimError(await scim(t, acme, 'GET', '/Users'), 404);
      const on = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/sso',
        headers: admin,
        payload: { enabled: true },
      });
      assert.equal(on.statusCode, 200, on.body);
    });
  });
}
