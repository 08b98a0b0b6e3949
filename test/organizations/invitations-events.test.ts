import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { type Receiver, startReceiver } from '../webhooks/receiver.ts';
import { createOrganization, tokenOfUrl } from './invitations-helpers.ts';

// API §21 events of invitations, delivered to a real receiver and verified with `standardwebhooks`:
// `organization.invitation.created` and `.accepted` carry data.organization and data.invitation
// {id,email,roles} and never the token; the acceptance adds `organization.member.added` with the
// person and their roles.

for (const dialect of DIALECTS) {
  describe(`organization invitations: events [${dialect}]`, () => {
    let t: TestApp;
    let rx: Receiver;
    before(async () => {
      rx = await startReceiver();
      ({ t } = await buildMailTestApp(dialect, {
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE: 'true',
      }));
    });
    after(async () => {
      await t.destroy();
      await rx.close();
    });

    it('created, accepted and member added reach the receiver, signed, without the token', async () => {
      const admin = await authHeaders(t, await createUser(t, { role: 'admin' }));
      const hook = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: admin,
        payload: {
          url: rx.url,
          events: [
            'organization.invitation.created',
            'organization.invitation.accepted',
            'organization.member.added',
          ],
        },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      rx.secrets = [String(json(hook).secret)];
      const org = await createOrganization(t, { name: 'Evented', slug: 'evented' });
      const made = await t.app.inject({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/invitations`,
        headers: admin,
        payload: { email: 'evented@example.com', roles: ['member'] },
      });
      assert.equal(made.statusCode, 201, made.body);
      const invitation = json<{ id: string; invite_url: string }>(made);
      const token = tokenOfUrl(invitation.invite_url);
      const accepted = await t.app.inject({
        method: 'POST',
        url: `/api/v1/organization-invitations/${token}/accept`,
        payload: { password: 'purple elephant juggles seventeen oranges' },
      });
      assert.equal(accepted.statusCode, 200, accepted.body);
      const userId = json<{ user: { id: string } }>(accepted).user.id;

      const all = await rx.waitFor((r) => r.length >= 3, 15_000);
      for (const r of all)
        assert.deepEqual(r.verifiedBy, [0], `${r.type} is signed with the endpoint's secret`);
      assert.ok(!all.some((r) => JSON.stringify(r.body).includes(token)), 'no event carries the token');
      const byType = new Map(all.map((r) => [r.type, r.body as { data: Record<string, unknown> }]));
      const expected = {
        organization: { id: org.id, slug: 'evented', name: 'Evented' },
        invitation: { id: invitation.id, email: 'evented@example.com', roles: ['member'] },
      };
      const created = byType.get('organization.invitation.created')?.data;
      assert.deepEqual(created?.organization, expected.organization);
      assert.deepEqual(created?.invitation, expected.invitation);
      const acceptedEvent = byType.get('organization.invitation.accepted')?.data;
      assert.deepEqual(acceptedEvent?.invitation, expected.invitation);
      assert.equal((acceptedEvent?.user as { id: string } | undefined)?.id, userId);
      const added = byType.get('organization.member.added')?.data;
      assert.deepEqual(added?.organization, expected.organization);
      assert.equal((added?.user as { id: string } | undefined)?.id, userId);
      assert.deepEqual(added?.roles, ['member']);
    });
  });
}
