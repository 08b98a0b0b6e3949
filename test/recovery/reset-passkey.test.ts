import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { caller, claimsOf, nextAddress, PASSWORD, registerPasskey, userWithSession } from '../mfa/helpers.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';
import { SoftCredential } from '../support/webauthn-authenticator.ts';
import { NEW_PASSWORD, post, verifyToken } from './helpers.ts';
import {
  type Ceremony,
  linkStatus,
  mailedResetToken,
  passkeyOptions,
  passkeyProof,
  resetCeremony,
  resetWith,
} from './passkey-reset-support.ts';

// docs/api.md §11 and §13: a password reset of an account with a passkey asks for the passkey (or a
// code). The holes pinned here: a reset link alone taking over a passkey-protected account, a
// refused passkey burning the link, and an assertion serving more than one reset.
for (const dialect of DIALECTS) {
  describe(`password reset with a passkey [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    before(async () => {
      smtp = await startSmtpServer();
      t = await buildTestApp(dialect, {
        env: { API_FORM: 'full', SMTP_URL: smtp.url, MAIL_RETRY_BASE_S: '1' },
      });
    });
    after(async () => {
      await t.destroy();
      await smtp.stop();
    });

    it('reset-bypasses-passkey: the link alone is refused; a passkey without user verification completes the reset; sessions end; the new password signs in with the passkey', async () => {
      const { user, token } = await userWithSession(t, 'passkey-reset@example.com');
      const { credential } = await registerPasskey(t, token);
      const resetToken = await mailedResetToken(t, smtp, user.email);

      const view = json<{ mfa_required: boolean; methods: string[] }>(
        await t.app.inject({ url: `/api/v1/password/reset/${resetToken}` }),
      );
      assert.equal(view.mfa_required, true);
      assert.deepEqual(view.methods, ['recovery_code', 'passkey'], 'the page can offer the passkey at once');

      const bare = await resetWith(t, resetToken, { password: NEW_PASSWORD });
      assert.equal(bare.statusCode, 403, bare.body);
      const refusal = json<{ code: string; methods: string[]; mfa_token?: string }>(bare);
      assert.equal(refusal.code, 'mfa_required');
      assert.ok(refusal.methods.includes('passkey'));
      assert.equal(refusal.mfa_token, undefined, 'the link is the proof: no mfa_token');

      const ceremony = await resetCeremony(t, resetToken);
      assert.deepEqual(
        ceremony.options.allowCredentials?.map((c) => c.id),
        [credential.idText],
        "the reset's options allow the user's own passkeys",
      );
      assert.equal(ceremony.options.userVerification, 'preferred');
      const done = await resetWith(t, resetToken, {
        password: NEW_PASSWORD,
        passkey: passkeyProof(credential, ceremony, { uv: false }),
      });
      assert.equal(done.statusCode, 200, done.body);
      assert.equal(await linkStatus(t, resetToken), 410, 'the link is used up');
      const used = await passkeyOptions(t, { reset_token: resetToken });
      assert.equal(used.statusCode, 410, 'options for a used link');
      assert.equal(json(used).code, 'link_invalid');
      assert.equal((await verifyToken(t, token)).statusCode, 401, 'every session of the user was revoked');
      const reset = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'password.reset')
        .where('target_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(JSON.parse(reset.details as string).second_factor, 'passkey');

      // The old password is dead; the new one leads to the second step, which the passkey completes.
      const old = await post(
        t,
        '/api/v1/login',
        { email: user.email, password: PASSWORD },
        {},
        nextAddress(),
      );
      assert.equal(old.statusCode, 401, old.body);
      const step = await post(
        t,
        '/api/v1/login',
        { email: user.email, password: NEW_PASSWORD },
        {},
        nextAddress(),
      );
      assert.equal(step.statusCode, 403, step.body);
      const mfaToken = json<{ mfa_token: string }>(step).mfa_token;
      const loginCeremony = json<Ceremony>(await passkeyOptions(t, { mfa_token: mfaToken }));
      const signedIn = await caller(t)('POST', '/api/v1/login/mfa', {
        mfa_token: mfaToken,
        passkey: passkeyProof(credential, loginCeremony),
      });
      assert.equal(signedIn.statusCode, 200, signedIn.body);
      const access = json<{ access_token: string }>(signedIn).access_token;
      assert.deepEqual(claimsOf(access).amr, ['pwd', 'hwk']);
      // One login.success, written by the sign-in pipeline (signIn), names the session it opened.
      const success = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'login.success')
        .where('target_id', '=', user.id)
        .orderBy('at', 'desc')
        .executeTakeFirstOrThrow();
      const details = JSON.parse(success.details as string);
      assert.equal(details.method, 'passkey');
      assert.deepEqual(details.amr, ['pwd', 'hwk']);
      assert.equal(details.session_id, claimsOf(access).sid);
      assert.equal((await caller(t, access)('GET', '/api/v1/passkeys')).statusCode, 200);
    });

    it('reset-options-dead-link: options with an unknown, malformed, replaced or expired reset_token answer 410 link_invalid', async () => {
      const { user, token } = await userWithSession(t, 'passkey-dead-link@example.com');
      await registerPasskey(t, token);
      const first = await mailedResetToken(t, smtp, user.email);
      const second = await mailedResetToken(t, smtp, user.email);
      await t.ctx.db
        .updateTable('one_time_links')
        .set({ expires_at: Date.now() - 1 })
        .where('user_id', '=', user.id)
        .where('used_at', 'is', null)
        .where('replaced_at', 'is', null)
        .execute();
      const unknown = Buffer.alloc(32, 1).toString('base64url');
      for (const [what, resetToken] of [
        ['unknown', unknown],
        ['malformed', 'not-a-token'],
        ['replaced by a newer link', first],
        ['expired', second],
      ] as const) {
        const res = await passkeyOptions(t, { reset_token: resetToken });
        assert.equal(res.statusCode, 410, `${what}: ${res.body}`);
        assert.equal(json(res).code, 'link_invalid', what);
      }
      const both = await passkeyOptions(t, { reset_token: unknown, mfa_token: 'x' });
      assert.equal(both.statusCode, 400, 'reset_token and mfa_token are one or the other');
      assert.equal(json(both).code, 'validation_failed');
    });

    it('reset-passkey-replay: a wrong, used or unknown challenge answers 401 passkey_invalid and leaves the link usable; a spent assertion does not serve the next link', async () => {
      const { user, token } = await userWithSession(t, 'passkey-replay@example.com');
      const { credential } = await registerPasskey(t, token);
      const resetToken = await mailedResetToken(t, smtp, user.email);

      const ceremony = await resetCeremony(t, resetToken);
      const other = await resetCeremony(t, resetToken);
      // Signed over another challenge than the one its challenge_id names.
      const wrong = await resetWith(t, resetToken, {
        password: NEW_PASSWORD,
        passkey: { ...passkeyProof(credential, other), challenge_id: ceremony.challenge_id },
      });
      assert.equal(wrong.statusCode, 401, wrong.body);
      assert.equal(json(wrong).code, 'passkey_invalid');
      assert.equal(await linkStatus(t, resetToken), 200, 'a refused passkey leaves the link usable');
      // That attempt spent the challenge: a correct assertion over it is refused now.
      const spent = await resetWith(t, resetToken, {
        password: NEW_PASSWORD,
        passkey: passkeyProof(credential, ceremony),
      });
      assert.equal(spent.statusCode, 401, spent.body);
      assert.equal(json(spent).code, 'passkey_invalid');
      const unknownId = await resetWith(t, resetToken, {
        password: NEW_PASSWORD,
        passkey: { ...passkeyProof(credential, other), challenge_id: '01a21079-0000-7000-8000-000000000000' },
      });
      assert.equal(unknownId.statusCode, 401, unknownId.body);
      assert.equal(await linkStatus(t, resetToken), 200);

      const proof = passkeyProof(credential, other);
      const done = await resetWith(t, resetToken, { password: NEW_PASSWORD, passkey: proof });
      assert.equal(done.statusCode, 200, done.body);
      const next = await mailedResetToken(t, smtp, user.email);
      const replayed = await resetWith(t, next, {
        password: 'yet another long passphrase here',
        passkey: proof,
      });
      assert.equal(replayed.statusCode, 401, replayed.body);
      assert.equal(json(replayed).code, 'passkey_invalid');
      assert.equal(await linkStatus(t, next), 200, 'the next link stays usable');
    });

    it('reset-passkey-throttle: wrong passkeys count on the account throttle (429 after 5 from one address); the link stays usable', async () => {
      const { user, token } = await userWithSession(t, 'passkey-throttle@example.com');
      const { credential } = await registerPasskey(t, token);
      const resetToken = await mailedResetToken(t, smtp, user.email);
      const address = nextAddress();
      const codes: number[] = [];
      for (let i = 0; i < 6; i++) {
        // A passkey the user never registered, on a live challenge of this reset.
        const stranger = new SoftCredential(credential.userHandle);
        const proof = passkeyProof(stranger, await resetCeremony(t, resetToken));
        const res = await resetWith(t, resetToken, { password: NEW_PASSWORD, passkey: proof }, address);
        codes.push(res.statusCode);
      }
      assert.deepEqual(codes, [401, 401, 401, 401, 401, 429]);
      assert.equal(await linkStatus(t, resetToken), 200);
    });
  });
}
