import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueLink } from '../../src/identity/links/one-time-links.ts';
import { pruneLinksAndBudgets } from '../../src/modules/recovery/recovery.service.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { type InviteResponseBody, invite, STRONG_PASSWORD, setPassword, tokenOf } from './helpers.ts';

// Invitation tokens live in the one-time links table (purpose `invitation`) beside reset,
// verification and sign-in links. These pin what sharing the table must not change: the other
// purposes' housekeeping and credential events leave invitations as they were, and a token of one
// purpose opens nothing of another.

const DAY = 86_400_000;

for (const dialect of DIALECTS) {
  describe(`invitations on the one-time links table [${dialect}]`, () => {
    let t: TestApp;
    let admin: Record<string, string>;

    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      admin = await authHeaders(t, await createUser(t, { role: 'admin', email: 'links-admin@example.com' }));
    });
    after(() => t.destroy());

    async function invited(email: string): Promise<InviteResponseBody> {
      const res = await invite(t, admin, { email });
      assert.equal(res.statusCode, 201, res.body);
      return json<InviteResponseBody>(res);
    }

    it('invitation-link-not-pruned: the links housekeeping keeps a long-expired invitation (410 invitation_expired, not 404)', async () => {
      const body = await invited('pruned@example.com');
      await t.ctx.db
        .updateTable('one_time_links')
        .set({ expires_at: Date.now() - 30 * DAY })
        .where('id', '=', body.invitation.id)
        .execute();
      await pruneLinksAndBudgets(t.ctx);
      const view = await t.app.inject({ url: `/api/v1/invite/${tokenOf(body)}` });
      assert.equal(view.statusCode, 410, view.body);
      assert.equal(json(view).code, 'invitation_expired');
    });

    it('invitation-not-ended-by-credential-event: an admin password set on an invited user leaves its invitation usable', async () => {
      const body = await invited('still-invited@example.com');
      const put = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${body.user.id}`,
        headers: admin,
        payload: { password: 'an admin chose this passphrase 9' },
      });
      assert.equal(put.statusCode, 200, put.body);
      assert.equal(json<{ status: string }>(put).status, 'invited');
      const view = await t.app.inject({ url: `/api/v1/invite/${tokenOf(body)}` });
      assert.equal(view.statusCode, 200, view.body);
      assert.equal((await setPassword(t, tokenOf(body), STRONG_PASSWORD)).statusCode, 200);
    });

    it('invitation-token-cross-purpose: a reset token is no invitation (404) and an invitation token no reset link (410 link_invalid)', async () => {
      const body = await invited('cross@example.com');
      const active = await createUser(t, { email: 'cross-active@example.com' });
      const reset = await issueLink(t.ctx.db, {
        userId: active.id,
        purpose: 'password_reset',
        email: active.email,
        ttlS: 3600,
      });
      const asInvitation = await t.app.inject({ url: `/api/v1/invite/${reset.token}` });
      assert.equal(asInvitation.statusCode, 404, asInvitation.body);
      assert.equal(json(asInvitation).code, 'invitation_not_found');
      const asReset = await t.app.inject({ url: `/api/v1/password/reset/${tokenOf(body)}` });
      assert.equal(asReset.statusCode, 410, asReset.body);
      assert.equal(json(asReset).code, 'link_invalid');
      // Neither look-up used anything up.
      assert.equal((await t.app.inject({ url: `/api/v1/invite/${tokenOf(body)}` })).statusCode, 200);
      assert.equal((await t.app.inject({ url: `/api/v1/password/reset/${reset.token}` })).statusCode, 200);
    });
  });
}
