import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { idpEnv, signInThroughIdp } from '../helpers/idp.ts';
import { firstAdmin, sessionFor } from '../helpers/users.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';
import { SoftCredential } from '../support/webauthn-authenticator.ts';
import { caller, claimsOf, enableTotp, loginMfa, PASSWORD, totpCode, userWithSession } from './helpers.ts';

for (const dialect of DIALECTS) {
  describe(`second factors after identity-provider sign-in, and security notices [${dialect}]`, () => {
    let op: OidcHarness;
    let smtp: SmtpHarness;
    let t: TestApp;
    before(async () => {
      op = await startOidcProvider();
      smtp = await startSmtpServer();
      t = await buildTestApp(dialect, {
        env: { API_FORM: 'full', SMTP_URL: smtp.url, APP_NAME: 'Acme ID', ...idpEnv(op) },
      });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
      await smtp?.stop();
    });

    const mailsTo = (to: string) => smtp.messages.filter((m) => m.to.includes(to));
    async function waitForMail(to: string, subject: RegExp) {
      for (let i = 0; i < 100; i++) {
        const found = mailsTo(to).find((m) => subject.test(m.subject));
        if (found) return found;
        await t.ctx.mail.outbox.drain();
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no mail to ${to} matching ${subject}`);
    }

    it('an account with TOTP signing in through the provider gets 403 mfa_required, then completes at /login/mfa', async () => {
      const { user, token } = await userWithSession(t, 'alice@example.com');
      const { secret, recoveryCodes } = await enableTotp(t, token);
      const res = await signInThroughIdp(t, op, 'alice');
      assert.equal(res.statusCode, 403, res.body);
      const body = json<{ code: string; mfa_token: string; methods: string[] }>(res);
      assert.equal(body.code, 'mfa_required');
      assert.deepEqual(body.methods, ['totp', 'recovery_code']);
      // The link made by this sign-in was committed before the second step.
      const identity = await t.ctx.db
        .selectFrom('identities')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirst();
      assert.ok(identity);
      const done = await loginMfa(t, body.mfa_token, totpCode(secret, 1));
      assert.equal(done.statusCode, 200, done.body);
      assert.equal(json<{ user: { id: string } }>(done).user.id, user.id);
      assert.deepEqual(claimsOf(json<{ access_token: string }>(done).access_token).amr, ['fed', 'otp']);

      // Security notices: TOTP turned on (no code or secret in it).
      const mail = await waitForMail(user.email, /Authenticator app sign-in was turned on/);
      assert.match(mail.subject, /^Acme ID: /);
      for (const text of [mail.text ?? '', mail.html ?? '']) {
        assert.ok(!text.includes(secret));
        for (const code of recoveryCodes) assert.ok(!text.includes(code));
      }
    });

    it('notices for recovery codes regenerated, TOTP removed, passkey added and removed, admin reset', async () => {
      const { user, token } = await userWithSession(t);
      const { secret } = await enableTotp(t, token);
      const call = caller(t, token);
      assert.equal(
        (await call('POST', '/api/v1/mfa/recovery-codes', { code: totpCode(secret, 1) })).statusCode,
        200,
      );
      await waitForMail(user.email, /New recovery codes were created/);

      const opts = json<{
        challenge_id: string;
        options: { challenge: string; rp: { id: string }; user: { id: string } };
      }>(await call('POST', '/api/v1/passkeys/registration/options', { current_password: PASSWORD }));
      const credential = new SoftCredential(opts.options.user.id);
      const created = await call('POST', '/api/v1/passkeys', {
        challenge_id: opts.challenge_id,
        response: credential.register(opts.options, PUBLIC_URL),
        name: 'Phone',
      });
      assert.equal(created.statusCode, 201);
      assert.equal('recovery_codes' in json(created), false, 'codes already held');
      await waitForMail(user.email, /A passkey was added/);
      assert.equal(
        (
          await call('DELETE', `/api/v1/passkeys/${json<{ id: string }>(created).id}`, {
            current_password: PASSWORD,
          })
        ).statusCode,
        204,
      );
      await waitForMail(user.email, /A passkey was removed/);

      const admin = (await sessionFor(t, await firstAdmin(t))).access_token;
      assert.equal((await caller(t, admin)('DELETE', `/api/v1/users/${user.id}/mfa`)).statusCode, 204);
      await waitForMail(user.email, /Your second factors were reset/);
    });

    it('removing TOTP sends a notice', async () => {
      const { user, token } = await userWithSession(t);
      const { recoveryCodes } = await enableTotp(t, token);
      const res = await caller(t, token)('DELETE', '/api/v1/mfa/totp', { code: recoveryCodes[0] });
      assert.equal(res.statusCode, 204);
      await waitForMail(user.email, /Authenticator app sign-in was turned off/);
    });
  });
}
