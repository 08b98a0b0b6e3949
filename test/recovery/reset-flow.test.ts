import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import {
  auditActions,
  FORGOT_BODY,
  linkIn,
  login,
  mailsTo,
  NEW_PASSWORD,
  nthMailTo,
  post,
  RESET_PREFIX,
  STRONG_PASSWORD,
  signIn,
  tokenOfLink,
  verifyToken,
} from './helpers.ts';

for (const dialect of DIALECTS) {
  describe(`password recovery end to end [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect, { APP_NAME: 'Acme ID' }));
    });
    after(() => t.destroy());

    it('forgot → mail → open twice → reset: sessions dead, old password refused, new one works, link dead', async () => {
      const user = await createUser(t, { email: 'ada@example.com', password: STRONG_PASSWORD });
      await t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', user.id).execute();
      const s1 = await signIn(t, 'ada@example.com', STRONG_PASSWORD);
      const s2 = await signIn(t, 'ada@example.com', STRONG_PASSWORD);

      const forgot = await post(t, '/api/v1/password/forgot', { email: 'Ada@Example.com' });
      assert.equal(forgot.statusCode, 202, forgot.body);
      assert.deepEqual(json(forgot), FORGOT_BODY);

      const mail = await nthMailTo(smtp, 'ada@example.com');
      assert.match(mail.subject, /reset your password/i);
      assert.match(mail.subject, /Acme ID/);
      assert.ok(mail.html?.includes('Acme ID'), 'the HTML body carries the product name');
      const link = linkIn(mail, RESET_PREFIX);
      const token = tokenOfLink(link);
      assert.ok(Buffer.from(token, 'base64url').length >= 32, 'at least 256 bits');
      assert.ok(mail.html?.includes(link), 'the HTML body has the same link');
      const stored = await t.ctx.db
        .selectFrom('one_time_links')
        .selectAll()
        .where('user_id', '=', user.id)
        .execute();
      assert.equal(stored.length, 1);
      assert.notEqual(stored[0]?.token_hash, token, 'stored only as a hash');

      // A mail scanner and then the person open the link: both see it, neither uses it up.
      for (let i = 0; i < 2; i++) {
        const open = await t.app.inject({ url: `/api/v1/password/reset/${token}` });
        assert.equal(open.statusCode, 200, open.body);
        const body = json(open);
        assert.equal(body.email, 'ada@example.com');
        assert.equal(body.mfa_required, false);
        assert.equal(body.expires_at, new Date(stored[0]?.expires_at ?? 0).toISOString());
        assert.equal(open.headers['cache-control'], 'no-store');
      }

      const weak = await post(t, `/api/v1/password/reset/${token}`, { password: 'short' });
      assert.equal(weak.statusCode, 422);
      assert.equal(json(weak).code, 'weak_password');
      assert.equal(
        (await t.app.inject({ url: `/api/v1/password/reset/${token}` })).statusCode,
        200,
        'still usable',
      );

      const reset = await post(t, `/api/v1/password/reset/${token}`, { password: NEW_PASSWORD });
      assert.equal(reset.statusCode, 200, reset.body);
      const resetBody = json<{ user: Record<string, unknown> }>(reset);
      assert.deepEqual(Object.keys(resetBody), ['user']);
      assert.equal(resetBody.user.email_verified, true, 'the mailbox is proven');
      assert.equal(resetBody.user.id, user.id);

      for (const s of [s1, s2]) {
        assert.equal(json(await verifyToken(t, s.access_token)).code, 'session_revoked');
        const refresh = await post(t, '/api/v1/refresh-token', { refresh_token: s.refresh_token });
        assert.equal(refresh.statusCode, 401);
      }
      assert.equal((await login(t, 'ada@example.com', STRONG_PASSWORD)).statusCode, 401);
      assert.equal((await login(t, 'ada@example.com', NEW_PASSWORD)).statusCode, 200);

      for (const res of [
        await post(t, `/api/v1/password/reset/${token}`, { password: `${NEW_PASSWORD} again` }),
        await t.app.inject({ url: `/api/v1/password/reset/${token}` }),
      ]) {
        assert.equal(res.statusCode, 410);
        assert.equal(json(res).code, 'link_invalid');
      }

      const notice = await nthMailTo(smtp, 'ada@example.com', 2);
      assert.match(notice.subject, /password was changed/i);
      assert.ok(!(notice.text ?? '').includes(token), 'the notice carries no secret');
      const actions = await auditActions(t, user.id);
      for (const a of ['password.forgot', 'password.reset']) assert.ok(actions.includes(a), `${a} audited`);
    });

    it('answers one code for unknown, malformed, replaced and expired links', async () => {
      const user = await createUser(t, { email: 'kay@example.com', password: STRONG_PASSWORD });
      await post(t, '/api/v1/password/forgot', { email: 'kay@example.com' });
      const first = tokenOfLink(linkIn(await nthMailTo(smtp, 'kay@example.com'), RESET_PREFIX));
      await post(t, '/api/v1/password/forgot', { email: 'kay@example.com' });
      const second = tokenOfLink(linkIn(await nthMailTo(smtp, 'kay@example.com', 2), RESET_PREFIX));
      assert.notEqual(first, second);
      await t.ctx.db
        .updateTable('one_time_links')
        .set({ expires_at: Date.now() - 1 })
        .where('user_id', '=', user.id)
        .where('used_at', 'is', null)
        .where('replaced_at', 'is', null)
        .execute();
      const unknown = 'A'.repeat(43);
      for (const token of [first, second, unknown, 'not-a-token']) {
        const res = await t.app.inject({ url: `/api/v1/password/reset/${token}` });
        assert.equal(res.statusCode, 410, `${token}: ${res.body}`);
        assert.equal(json(res).code, 'link_invalid');
      }
    });

    it('an admin mails a recovery link (202 {expires_at}), never shown to the admin', async () => {
      const user = await createUser(t, { email: 'grace@example.com', password: STRONG_PASSWORD });
      const admin = await authHeaders(t, await firstAdmin(t));
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/users/${user.id}/password-reset`,
        headers: admin,
      });
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(Object.keys(json(res)), ['expires_at']);
      const mail = await nthMailTo(smtp, 'grace@example.com');
      const token = tokenOfLink(linkIn(mail, RESET_PREFIX));
      assert.ok(!res.body.includes(token));
      assert.equal((await t.app.inject({ url: `/api/v1/password/reset/${token}` })).statusCode, 200);
      const withBody = await t.app.inject({
        method: 'POST',
        url: `/api/v1/users/${user.id}/password-reset`,
        headers: { ...admin, 'content-type': 'application/json' },
        payload: '{}',
      });
      assert.equal(withBody.statusCode, 202);
      const mine = await authHeaders(t, user);
      const forbidden = await t.app.inject({
        method: 'POST',
        url: `/api/v1/users/${user.id}/password-reset`,
        headers: mine,
      });
      assert.equal(forbidden.statusCode, 403);
      const missing = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users/nope/password-reset',
        headers: admin,
      });
      assert.equal(missing.statusCode, 404);
      assert.ok((await auditActions(t, user.id)).includes('password.reset_link'));
      assert.equal(mailsTo(smtp, 'grace@example.com').length >= 1, true);
    });
  });
}
