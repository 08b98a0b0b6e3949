import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { entraUser, oktaUser, patchOp, type ScimOrg, scim, scimApp, scimError, scimOrg } from './helpers.ts';

const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';

interface ScimGroup {
  id: string;
  displayName: string;
  members?: Array<{ value: string }>;
}

for (const dialect of DIALECTS) {
  describe(`scim: Groups and group→role mapping [${dialect}]`, () => {
    let t: TestApp;
    let admin: { authorization: string };
    let acme: ScimOrg;
    let globex: ScimOrg;
    let ann: string;
    let bob: string;

    before(async () => {
      ({ t, admin } = await scimApp(dialect));
      for (const name of ['billing', 'auditor']) {
        const res = await t.app.inject({
          method: 'PUT',
          url: `/api/v1/roles/${name}`,
          headers: admin,
          payload: { description: name, permissions: [] },
        });
        assert.ok(res.statusCode < 300, res.body);
      }
      acme = await scimOrg(t, admin, {
        name: 'Acme',
        domains: ['acme.example'],
        default_roles: ['member'],
        scim_group_roles: { Finance: ['billing'], Audit: ['auditor', 'billing'] },
      });
      globex = await scimOrg(t, admin, { name: 'Globex', domains: ['globex.example'] });
      ann = json<{ id: string }>(await scim(t, acme, 'POST', '/Users', oktaUser('ann@acme.example', 'a'))).id;
      bob = json<{ id: string }>(
        await scim(t, acme, 'POST', '/Users', entraUser('bob@acme.example', 'b')),
      ).id;
    });
    after(async () => {
      await t?.destroy();
    });

    const rolesOf = async (userId: string) =>
      (
        await t.ctx.db
          .selectFrom('organization_member_roles')
          .select('role')
          .where('organization_id', '=', acme.id)
          .where('user_id', '=', userId)
          .orderBy('role')
          .execute()
      ).map((r) => r.role);

    it('scim_group_roles is in the organization object, admin-only, its roles must exist', async () => {
      const org = json<{ scim_group_roles: Record<string, string[]> }>(
        await t.app.inject({ url: `/api/v1/organizations/${acme.id}`, headers: admin }),
      );
      assert.deepEqual(org.scim_group_roles, { Finance: ['billing'], Audit: ['auditor', 'billing'] });
      const bad = await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/organizations/${acme.id}`,
        headers: admin,
        payload: { scim_group_roles: { X: ['no-such-role'] } },
      });
      assert.equal(bad.statusCode, 404, bad.body);
    });

    it("Entra ID's group create and Add members; a role a group grants is held while in it", async () => {
      // Entra ID: POST /Groups, then PATCH "Add" of members.
      const created = await scim(t, acme, 'POST', '/Groups', {
        externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
        displayName: 'Finance',
        meta: { resourceType: 'Group' },
        members: [],
        schemas: [GROUP_SCHEMA],
      });
      assert.equal(created.statusCode, 201, created.body);
      const finance = json<ScimGroup>(created).id;
      const added = await scim(
        t,
        acme,
        'PATCH',
        `/Groups/${finance}`,
        patchOp({ op: 'Add', path: 'members', value: [{ $ref: null, value: ann }] }),
      );
      assert.equal(added.statusCode, 200, added.body);
      assert.deepEqual(await rolesOf(ann), ['billing', 'member']);
      // Entra ID's lookups: by displayName, without members.
      const list = await scim(
        t,
        acme,
        'GET',
        `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "Finance"')}`,
      );
      const page = json<{ totalResults: number; Resources: ScimGroup[] }>(list);
      assert.equal(page.totalResults, 1);
      assert.equal(page.Resources[0]?.members, undefined);
      // Entra ID's "Remove" with a value list.
      const removed = await scim(
        t,
        acme,
        'PATCH',
        `/Groups/${finance}`,
        patchOp({ op: 'Remove', path: 'members', value: [{ $ref: null, value: ann }] }),
      );
      assert.equal(removed.statusCode, 200, removed.body);
      assert.deepEqual(await rolesOf(ann), ['member']);
    });

    it("Okta's group push: leaving one group keeps a role another grants; a direct grant is kept", async () => {
      const audit = json<ScimGroup>(
        await scim(t, acme, 'POST', '/Groups', {
          schemas: [GROUP_SCHEMA],
          displayName: 'Audit',
          members: [{ value: bob }],
        }),
      );
      const finance = json<{ Resources: ScimGroup[] }>(
        await scim(t, acme, 'GET', `/Groups?filter=${encodeURIComponent('displayName eq "Finance"')}`),
      ).Resources[0] as ScimGroup;
      await scim(
        t,
        acme,
        'PATCH',
        `/Groups/${finance.id}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: bob }] }),
      );
      assert.deepEqual(await rolesOf(bob), ['auditor', 'billing', 'member']);
      // Okta removes a member by a filter path.
      const res = await scim(
        t,
        acme,
        'PATCH',
        `/Groups/${audit.id}`,
        patchOp({ op: 'remove', path: `members[value eq "${bob}"]` }),
      );
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await rolesOf(bob), ['billing', 'member'], 'Finance still grants billing');
      await scim(
        t,
        acme,
        'PATCH',
        `/Groups/${finance.id}`,
        patchOp({ op: 'remove', path: `members[value eq "${bob}"]` }),
      );
      assert.deepEqual(await rolesOf(bob), ['member'], 'the direct grant (default_roles) stays');
    });

    it('changing scim_group_roles re-applies to current members; an unmapped group grants nothing; delete takes its roles', async () => {
      const sales = json<ScimGroup>(
        await scim(t, acme, 'POST', '/Groups', {
          schemas: [GROUP_SCHEMA],
          displayName: 'Sales',
          members: [{ value: ann }],
        }),
      );
      assert.deepEqual(await rolesOf(ann), ['member'], 'Sales is not mapped');
      const patched = await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/organizations/${acme.id}`,
        headers: admin,
        payload: { scim_group_roles: { Sales: ['auditor'] } },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.deepEqual(await rolesOf(ann), ['auditor', 'member']);
      const del = await scim(t, acme, 'DELETE', `/Groups/${sales.id}`);
      assert.equal(del.statusCode, 204);
      assert.deepEqual(await rolesOf(ann), ['member']);
      scimError(await scim(t, acme, 'GET', `/Groups/${sales.id}`), 404);
    });

    it('tenancy: groups and members of another organization are 404 / invalidValue', async () => {
      const mine = json<ScimGroup>(
        await scim(t, acme, 'POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Ops' }),
      );
      scimError(await scim(t, globex, 'GET', `/Groups/${mine.id}`), 404);
      scimError(
        await scim(
          t,
          globex,
          'PATCH',
          `/Groups/${mine.id}`,
          patchOp({ op: 'add', path: 'members', value: [{ value: ann }] }),
        ),
        404,
      );
      scimError(await scim(t, globex, 'DELETE', `/Groups/${mine.id}`), 404);
      const theirs = json<ScimGroup>(
        await scim(t, globex, 'POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Ops' }),
      );
      scimError(
        await scim(
          t,
          globex,
          'PATCH',
          `/Groups/${theirs.id}`,
          patchOp({ op: 'add', path: 'members', value: [{ value: ann }] }),
        ),
        400,
        'invalidValue',
      );
      scimError(
        await scim(t, acme, 'POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Ops' }),
        409,
        'uniqueness',
      );
      scimError(
        await scim(t, acme, 'GET', `/Groups?filter=${encodeURIComponent('members eq "x"')}`),
        400,
        'invalidFilter',
      );
    });
  });
}
