import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { createUser } from '../helpers/users.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import {
  auditActions,
  linkIn,
  login,
  mailsTo,
  nthMailTo,
  pause,
  post,
  STRONG_PASSWORD,
  signIn,
  tokenOfLink,
  VERIFY_PREFIX,
  verifyToken,
} from './helpers.ts';

const bearer = (access: string) => ({ authorization: `Bearer ${access}` });

for (const dialect of DIALECTS) {
  describe(`e-mail ownership end to end [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect));
    });
    after(() => t.destroy());

    async function unverifiedUser(email: string) {
      const user = await createUser(t, { email, password: STRONG_PASSWORD });
      await t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', user.id).execute();
      return user;
    }

    it('verification: mail → open twice → confirm → verified; the link is then dead; 409 once verified', async () => {
      const user = await unverifiedUser('vera@example.com');
      const s = await signIn(t, 'vera@example.com', STRONG_PASSWORD);
      const res = await post(t, '/api/v1/email/verification', undefined, bearer(s.access_token));
      assert.equal(res.statusCode, 202, res.body);
      const mail = await nthMailTo(smtp, 'vera@example.com');
      assert.match(mail.subject, /confirm your e-mail address/i);
      const token = tokenOfLink(linkIn(mail, VERIFY_PREFIX));
      for (let i = 0; i < 2; i++) {
        const open = await t.app.inject({ url: `/api/v1/email/verify/${token}` });
        assert.equal(open.statusCode, 200, open.body);
        assert.equal(json(open).email, 'vera@example.com');
        assert.equal(json(open).purpose, 'verify');
      }
      const confirm = await post(t, `/api/v1/email/verify/${token}`);
      assert.equal(confirm.statusCode, 200, confirm.body);
      assert.equal(json<{ user: { email_verified: boolean } }>(confirm).user.email_verified, true);
      assert.equal(json(await post(t, `/api/v1/email/verify/${token}`)).code, 'link_invalid');
      assert.equal(json(await t.app.inject({ url: `/api/v1/email/verify/${token}` })).code, 'link_invalid');
      const again = await post(t, '/api/v1/email/verification', undefined, bearer(s.access_token));
      assert.equal(again.statusCode, 409);
      assert.equal(json(again).code, 'email_already_verified');
      assert.equal((await verifyToken(t, s.access_token)).statusCode, 200, 'a verification ends no session');
      assert.ok((await auditActions(t, user.id)).includes('email.verify'));
    });

    it('verification requests: 1 a minute per user (429 with Retry-After); without a token 401', async () => {
      await unverifiedUser('rate@example.com');
      const s = await signIn(t, 'rate@example.com', STRONG_PASSWORD);
      assert.equal((await post(t, '/api/v1/email/verification', {}, bearer(s.access_token))).statusCode, 202);
      const second = await post(t, '/api/v1/email/verification', undefined, bearer(s.access_token));
      assert.equal(second.statusCode, 429);
      assert.ok(Number(second.headers['retry-after']) >= 1);
      const anonymous = await post(t, '/api/v1/email/verification', {
        email: 'rate@example.com',
        password: STRONG_PASSWORD,
      });
      assert.equal(anonymous.statusCode, 401, 'the body form exists only with REQUIRE_VERIFIED_EMAIL');
      assert.equal(json(anonymous).code, 'unauthenticated');
    });

    it('change: link to the new address and notice to the old; nothing changes until used; then switched, sessions ended', async () => {
      const user = await createUser(t, { email: 'old@example.com', password: STRONG_PASSWORD });
      const s = await signIn(t, 'old@example.com', STRONG_PASSWORD);
      const wrong = await post(
        t,
        '/api/v1/email/change',
        { new_email: 'new@example.com', current_password: 'not the password at all' },
        bearer(s.access_token),
      );
      assert.equal(wrong.statusCode, 401);
      assert.equal(json(wrong).code, 'invalid_credentials');

      const res = await post(
        t,
        '/api/v1/email/change',
        { new_email: 'New@Example.com', current_password: STRONG_PASSWORD },
        bearer(s.access_token),
      );
      assert.equal(res.statusCode, 202, res.body);
      const linkMail = await nthMailTo(smtp, 'new@example.com');
      assert.match(linkMail.subject, /confirm your new e-mail address/i);
      const notice = await nthMailTo(smtp, 'old@example.com');
      assert.match(notice.subject, /change of your e-mail address was requested/i);
      assert.ok(
        !(notice.text ?? '').includes(VERIFY_PREFIX),
        'the notice to the old address carries no link',
      );
      const token = tokenOfLink(linkIn(linkMail, VERIFY_PREFIX));

      const open = json(await t.app.inject({ url: `/api/v1/email/verify/${token}` }));
      assert.equal(open.purpose, 'change');
      assert.equal(open.email, 'new@example.com', 'a change link shows the new address');
      assert.equal(
        (await login(t, 'old@example.com', STRONG_PASSWORD)).statusCode,
        200,
        'nothing changed yet',
      );

      const use = await post(t, `/api/v1/email/verify/${token}`);
      assert.equal(use.statusCode, 200, use.body);
      const changed = json<{ user: { email: string; email_verified: boolean } }>(use).user;
      assert.equal(changed.email, 'new@example.com');
      assert.equal(changed.email_verified, true);
      assert.equal(json(await verifyToken(t, s.access_token)).code, 'session_revoked', 'every session ends');
      assert.equal((await login(t, 'old@example.com', STRONG_PASSWORD)).statusCode, 401);
      assert.equal((await login(t, 'new@example.com', STRONG_PASSWORD)).statusCode, 200);
      const changedNotice = await nthMailTo(smtp, 'old@example.com', 2);
      assert.match(changedNotice.subject, /e-mail address was changed/i);
      assert.equal(json(await post(t, `/api/v1/email/verify/${token}`)).code, 'link_invalid', 'no replay');
      const actions = await auditActions(t, user.id);
      for (const a of ['email.change_request', 'email.change']) assert.ok(actions.includes(a), a);
    });

    it('change to a taken address: the same 202, its owner gets a notice instead of a link', async () => {
      await createUser(t, { email: 'owner@example.com', password: STRONG_PASSWORD });
      const mover = await createUser(t, { email: 'mover@example.com', password: STRONG_PASSWORD });
      const s = await signIn(t, 'mover@example.com', STRONG_PASSWORD);
      const res = await post(
        t,
        '/api/v1/email/change',
        { new_email: 'owner@example.com', current_password: STRONG_PASSWORD },
        bearer(s.access_token),
      );
      assert.equal(res.statusCode, 202);
      assert.deepEqual(json(res), {
        message: 'We have sent a link to the new address; nothing changes until it is used.',
      });
      const ownerMail = await nthMailTo(smtp, 'owner@example.com');
      assert.match(ownerMail.subject, /tried to move an account to your address/i);
      assert.ok(!(ownerMail.text ?? '').includes(VERIFY_PREFIX));
      const moverNotice = await nthMailTo(smtp, 'mover@example.com');
      assert.ok(!(moverNotice.text ?? '').includes(VERIFY_PREFIX));
      // The link is issued for a taken address too, so the work does not tell whether it is taken
      // (docs/security.md, Round 3: test/security/enumeration-work.test.ts), but it is never mailed:
      // neither mail above carries it, and no other mail went out for this change.
      const links = await t.ctx.db
        .selectFrom('one_time_links')
        .select(['purpose', 'email'])
        .where('user_id', '=', mover.id)
        .execute();
      assert.deepEqual(links, [{ purpose: 'email_change', email: 'owner@example.com' }]);
      assert.deepEqual(
        smtp.messages.filter(
          (m) => (m.text ?? '').includes(VERIFY_PREFIX) && m.envelope.to.includes('owner@example.com'),
        ),
        [],
      );
    });

    it('a change link whose address was taken meanwhile answers 409 email_taken and changes nothing', async () => {
      await createUser(t, { email: 'racer@example.com', password: STRONG_PASSWORD });
      const s = await signIn(t, 'racer@example.com', STRONG_PASSWORD);
      await post(
        t,
        '/api/v1/email/change',
        { new_email: 'contested@example.com', current_password: STRONG_PASSWORD },
        bearer(s.access_token),
      );
      const token = tokenOfLink(linkIn(await nthMailTo(smtp, 'contested@example.com'), VERIFY_PREFIX));
      await createUser(t, { email: 'contested@example.com' });
      const use = await post(t, `/api/v1/email/verify/${token}`);
      assert.equal(use.statusCode, 409);
      assert.equal(json(use).code, 'email_taken');
      assert.equal((await verifyToken(t, s.access_token)).statusCode, 200);
    });

    it('admins set email_verified; any change of the address sets it false', async () => {
      const user = await createUser(t, { email: 'flag@example.com' });
      const admin = await signIn(t, 'root@gatehouse.test', 'correct horse battery staple 42');
      const put = (payload: Record<string, unknown>) =>
        t.app.inject({
          method: 'PUT',
          url: `/api/v1/users/${user.id}`,
          headers: bearer(admin.access_token),
          payload,
        });
      assert.equal(json(await put({ email_verified: false })).email_verified, false);
      assert.equal(json(await put({ email_verified: true })).email_verified, true);
      assert.equal(
        json(await put({ email: 'flag@example.com' })).email_verified,
        true,
        'the same address is no change',
      );
      assert.equal(json(await put({ email: 'flag2@example.com' })).email_verified, false);
      const self = await signIn(t, 'rate@example.com', STRONG_PASSWORD);
      const own = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${json<{ user: { id: string } }>(await login(t, 'rate@example.com', STRONG_PASSWORD)).user.id}`,
        headers: bearer(self.access_token),
        payload: { email_verified: true },
      });
      assert.equal(own.statusCode, 403, 'users cannot vouch for themselves');
      await pause(0);
      assert.ok(mailsTo(smtp, 'flag2@example.com').length === 0);
    });
  });
}
