import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { createUser } from '../helpers/users.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import {
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
  VERIFY_PREFIX,
  waitUntil,
} from './helpers.ts';

/*
 * The hole of docs/api.md §16 ("Credential events end every outstanding link"), reproduced as it was
 * reported: someone who has the password asks to move the account to their own address; the owner
 * then resets the password and logs out everywhere; the change link must be dead by then.
 */

const bearer = (access: string) => ({ authorization: `Bearer ${access}` });

for (const dialect of DIALECTS) {
  describe(`email-change-link-outlives-reset [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect));
    });
    after(() => t.destroy());

    it('email-change-link-outlives-reset: the owner resets and logs out everywhere; the change link answers 410 link_invalid', async () => {
      const owner = await createUser(t, { email: 'olive@example.com', password: STRONG_PASSWORD });

      // The attacker, holding the password, asks to move the account to their own mailbox.
      const attacker = await signIn(t, 'olive@example.com', STRONG_PASSWORD);
      const ask = await post(
        t,
        '/api/v1/email/change',
        { new_email: 'mallory@example.net', current_password: STRONG_PASSWORD },
        bearer(attacker.access_token),
      );
      assert.equal(ask.statusCode, 202, ask.body);
      const changeToken = tokenOfLink(linkIn(await nthMailTo(smtp, 'mallory@example.net'), VERIFY_PREFIX));
      const opened = await t.app.inject({ url: `/api/v1/email/verify/${changeToken}` });
      assert.equal(opened.statusCode, 200, 'the change link is live before the owner acts');

      // The owner recovers: a reset through the mailed link, then "log out everywhere".
      assert.equal(
        (await post(t, '/api/v1/password/forgot', { email: 'olive@example.com' })).statusCode,
        202,
      );
      const resetMail = await waitUntil(
        () => mailsTo(smtp, 'olive@example.com').find((m) => (m.text ?? '').includes(RESET_PREFIX)),
        'the reset mail',
      );
      const reset = await post(t, `/api/v1/password/reset/${tokenOfLink(linkIn(resetMail, RESET_PREFIX))}`, {
        password: NEW_PASSWORD,
      });
      assert.equal(reset.statusCode, 200, reset.body);
      const afterReset = await t.app.inject({ url: `/api/v1/email/verify/${changeToken}` });
      assert.equal(afterReset.statusCode, 410, 'the reset alone ended the change link');
      const ownerSession = await signIn(t, 'olive@example.com', NEW_PASSWORD);
      const logout = await post(t, '/api/v1/logout', { scope: 'global' }, bearer(ownerSession.access_token));
      assert.equal(logout.statusCode, 204, logout.body);

      // The old change link no longer moves the account.
      for (const method of ['GET', 'POST'] as const) {
        const res = await t.app.inject({ method, url: `/api/v1/email/verify/${changeToken}` });
        assert.equal(res.statusCode, 410, `${method}: ${res.body}`);
        assert.equal(json(res).code, 'link_invalid');
      }
      const row = await t.ctx.db
        .selectFrom('users')
        .select(['email', 'email_verified'])
        .where('id', '=', owner.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...row }, { email: 'olive@example.com', email_verified: 1 });
      assert.equal((await login(t, 'olive@example.com', NEW_PASSWORD)).statusCode, 200, 'the owner keeps it');
      assert.equal((await login(t, 'mallory@example.net', NEW_PASSWORD)).statusCode, 401);
    });
  });
}
