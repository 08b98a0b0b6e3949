import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createEndpoint } from '../webhooks/helpers.ts';
import { orgApp, userWithHeaders } from './helpers.ts';

// docs/api.md §21 "Events" and settled details: data.organization {id,slug,name}; member events add
// data.user and data.roles; written to the outbox in the transaction of the change.

interface Emitted {
  type: string;
  data: {
    organization: { id: string; slug: string; name: string };
    user?: { id: string; email: string };
    roles?: string[];
    actor: { type: string; id: string | null };
  };
}

for (const dialect of DIALECTS) {
  describe(`organizations: events [${dialect}]`, () => {
    let t: TestApp;
    let admin: UserRow;
    let adminHeaders: Record<string, string>;
    before(async () => {
      ({ t, admin, adminHeaders } = await orgApp(dialect));
      await createEndpoint(t, adminHeaders as { authorization: string }, 'https://hooks.example.com/orgs', [
        'organization.created',
        'organization.updated',
        'organization.deleted',
        'organization.member.added',
        'organization.member.updated',
        'organization.member.removed',
      ]);
    });
    after(() => t.destroy());
    beforeEach(() => t.ctx.db.deleteFrom('webhook_events').execute());
    const emitted = async (): Promise<Emitted[]> =>
      (await t.ctx.db.selectFrom('webhook_events').select('payload').orderBy('id').execute()).map(
        (r) => JSON.parse(r.payload) as Emitted,
      );

    it('emits each change with the organization, and the member and roles for member events', async () => {
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/organizations',
        headers: adminHeaders,
        payload: { name: 'Evented' },
      });
      const org = json<{ id: string; slug: string }>(created);
      const { user } = await userWithHeaders(t);
      const url = `/api/v1/organizations/${org.id}`;
      await t.app.inject({
        method: 'PUT',
        url: `${url}/members/${user.id}`,
        headers: adminHeaders,
        payload: { roles: ['member'] },
      });
      await t.app.inject({
        method: 'PUT',
        url: `${url}/members/${user.id}`,
        headers: adminHeaders,
        payload: { roles: ['owner'] },
      });
      await t.app.inject({ method: 'PATCH', url, headers: adminHeaders, payload: { name: 'Evented 2' } });
      await t.app.inject({ method: 'DELETE', url: `${url}/members/${user.id}`, headers: adminHeaders });
      // A refused change emits nothing.
      await t.app.inject({
        method: 'PATCH',
        url,
        headers: adminHeaders,
        payload: { metadata: { x: 'y'.repeat(5000) } },
      });
      await t.app.inject({ method: 'DELETE', url, headers: adminHeaders });
      const events = await emitted();
      assert.deepEqual(
        events.map((e) => e.type),
        [
          'organization.created',
          'organization.member.added',
          'organization.member.updated',
          'organization.updated',
          'organization.member.removed',
          'organization.deleted',
        ],
      );
      const orgOf = (name: string) => ({ id: org.id, slug: org.slug, name });
      assert.deepEqual(events[0]?.data, {
        organization: orgOf('Evented'),
        actor: { type: 'user', id: admin.id },
      });
      assert.deepEqual(events[1]?.data.organization, orgOf('Evented'));
      assert.equal(events[1]?.data.user?.id, user.id);
      assert.deepEqual(events[1]?.data.roles, ['member']);
      assert.deepEqual(events[2]?.data.roles, ['owner']);
      assert.deepEqual(events[3]?.data.organization, orgOf('Evented 2'));
      assert.equal(events[3]?.data.user, undefined);
      assert.deepEqual(events[4]?.data.roles, ['owner']);
      assert.equal(events[4]?.data.user?.id, user.id);
      assert.deepEqual(events[5]?.data.organization, orgOf('Evented 2'));
      const audit = await t.ctx.db
        .selectFrom('audit_log')
        .select('action')
        .where('target_id', '=', org.id)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        audit.map((a) => a.action),
        events.map((e) => e.type),
        'audit actions are the event names',
      );
    });

    it('a webhook may subscribe to the organization events (they are known types)', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: adminHeaders,
        payload: {
          url: 'https://hooks.example.com/inv',
          events: ['organization.invitation.created', 'organization.invitation.accepted'],
        },
      });
      assert.equal(res.statusCode, 201, res.body);
    });
  });
}
