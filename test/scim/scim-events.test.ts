import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createEndpoint } from '../webhooks/helpers.ts';
import { oktaUser, patchOp, type ScimOrg, scim, scimApp, scimOrg } from './helpers.ts';

interface Emitted {
  type: string;
  data: Record<string, unknown>;
}

for (const dialect of DIALECTS) {
  describe(`scim: events [${dialect}]`, () => {
    let t: TestApp;
    let acme: ScimOrg;

    before(async () => {
      let admin: { authorization: string };
      ({ t, admin } = await scimApp(dialect));
      acme = await scimOrg(t, admin, { name: 'Acme', domains: ['acme.example'], default_roles: ['member'] });
      await createEndpoint(t, admin, 'https://hooks.example.com/scim', [
        'user.created',
        'user.disabled',
        'organization.member.added',
        'organization.member.removed',
      ]);
    });
    after(() => t?.destroy());

    it('user.created and user.disabled carry "via": "scim"; membership events as organizations emit them', async () => {
      const id = json<{ id: string }>(
        await scim(t, acme, 'POST', '/Users', oktaUser('evie@acme.example')),
      ).id;
      const off = await scim(
        t,
        acme,
        'PATCH',
        `/Users/${id}`,
        patchOp({ op: 'replace', value: { active: false } }),
      );
      assert.equal(off.statusCode, 200, off.body);
      const events = (
        await t.ctx.db.selectFrom('webhook_events').select('payload').orderBy('id').execute()
      ).map((r) => JSON.parse(r.payload) as Emitted);
      assert.deepEqual(
        events.map((e) => e.type),
        ['user.created', 'organization.member.added', 'organization.member.removed', 'user.disabled'],
      );
      const [created, added, , disabled] = events;
      assert.equal(created?.data.via, 'scim');
      assert.equal(disabled?.data.via, 'scim');
      assert.match(JSON.stringify(added?.data), new RegExp(id));
      assert.equal((added?.data.organization as { id: string } | undefined)?.id, acme.id);
      assert.deepEqual(added?.data.roles, ['member']);
    });
  });
}
