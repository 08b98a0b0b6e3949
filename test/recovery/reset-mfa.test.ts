import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { enableTotp, loginMfa, PASSWORD, passwordStep, userWithSession } from '../mfa/helpers.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import { linkIn, mailsTo, NEW_PASSWORD, post, RESET_PREFIX, tokenOfLink, waitUntil } from './helpers.ts';

// docs/api.md §11: a reset link alone must not take over an account that has a second factor
// (the reset-deadlocked-by-MFA and MFA-bypass-by-reset holes of other services): the reset asks for
// a TOTP or recovery code, a wrong one rolls the reset back and leaves the link usable.
for (const dialect of DIALECTS) {
  describe(`password reset with a second factor [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect));
    });
    after(() => t.destroy());

    it('reset-bypasses-mfa: the link alone is refused (403 mfa_required, no mfa_token); a wrong code keeps the link; a recovery code completes it once', async () => {
      const { user, token } = await userWithSession(t, 'mfa-reset@example.com');
      const { recoveryCodes } = await enableTotp(t, token);

      assert.equal((await post(t, '/api/v1/password/forgot', { email: user.email })).statusCode, 202);
      // The TOTP-enabled notice went to the same address first; wait for the mail with the link.
      const mail = await waitUntil(
        () => mailsTo(smtp, user.email).find((m) => (m.text ?? '').includes(RESET_PREFIX)),
        'the reset mail',
      );
      const link = linkIn(mail, RESET_PREFIX);
      const resetUrl = `/api/v1/password/reset/${tokenOfLink(link)}`;

      const view = await t.app.inject({ url: resetUrl });
      assert.equal(view.statusCode, 200, view.body);
      assert.equal(json<{ mfa_required: boolean }>(view).mfa_required, true);

      const bare = await post(t, resetUrl, { password: NEW_PASSWORD });
      assert.equal(bare.statusCode, 403, bare.body);
      const bareBody = json<{ code: string; methods: string[]; mfa_token?: string }>(bare);
      assert.equal(bareBody.code, 'mfa_required');
      assert.equal(bareBody.mfa_token, undefined, 'the link is the proof: no mfa_token');
      assert.ok(bareBody.methods.includes('totp') && bareBody.methods.includes('recovery_code'));

      const wrong = await post(t, resetUrl, { password: NEW_PASSWORD, mfa_code: 'zzzzz-zzzzz' });
      assert.equal(wrong.statusCode, 401, wrong.body);
      assert.equal(json<{ code: string }>(wrong).code, 'mfa_code_invalid');
      assert.equal(
        (await t.app.inject({ url: resetUrl })).statusCode,
        200,
        'a wrong code leaves the link usable',
      );
      assert.equal(
        (await post(t, '/api/v1/login', { email: user.email, password: PASSWORD })).statusCode,
        403,
        'the old password still stands (mfa_required) after a refused reset',
      );

      const code = recoveryCodes[0] as string;
      const done = await post(t, resetUrl, { password: NEW_PASSWORD, mfa_code: code.toUpperCase() });
      assert.equal(done.statusCode, 200, done.body);
      assert.equal((await t.app.inject({ url: resetUrl })).statusCode, 410, 'the link is used up');

      // The factors stay: the new password leads to the second step, where the spent code is dead.
      const step = await passwordStep(t, { ...user, email: user.email }, '10.30.0.1').catch(() => null);
      assert.equal(step, null, 'the old password no longer reaches the second step');
      const login = await post(
        t,
        '/api/v1/login',
        { email: user.email, password: NEW_PASSWORD },
        {},
        '10.30.0.2',
      );
      assert.equal(login.statusCode, 403, login.body);
      const mfaToken = json<{ mfa_token: string }>(login).mfa_token;
      const reused = await loginMfa(t, mfaToken, code, '10.30.0.2');
      assert.equal(reused.statusCode, 401, 'the recovery code spent by the reset works no more');
    });
  });
}
