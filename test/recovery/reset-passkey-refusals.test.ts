import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { firstAdmin, sessionFor } from '../helpers/users.ts';
import {
  caller,
  enableTotp,
  nextAddress,
  PASSWORD,
  registerPasskey,
  totpCode,
  userWithSession,
} from '../mfa/helpers.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';
import { NEW_PASSWORD, post } from './helpers.ts';
import {
  type Ceremony,
  linkStatus,
  mailedResetToken,
  passkeyOptions,
  passkeyProof,
  resetCeremony,
  resetWith,
} from './passkey-reset-support.ts';

// docs/api.md §11, §13: a passkey challenge serves one purpose and one user. The holes pinned here:
// a sign-in's challenge (or another user's reset challenge, or another user's passkey) unlocking a
// reset, and a reset's challenge completing a sign-in.
for (const dialect of DIALECTS) {
  describe(`password reset with a passkey: refusals [${dialect}]`, () => {
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

    /** A user with a passkey and a mailed reset link. */
    async function userWithResetLink(email: string) {
      const { user, token } = await userWithSession(t, email);
      const { credential } = await registerPasskey(t, token);
      return { user, token, credential, resetToken: await mailedResetToken(t, smtp, email) };
    }

    it("login-challenge-serves-reset: a sign-in's challenge (mfa_token or discoverable) is refused in a reset, and a reset's challenge at /login/mfa", async () => {
      const { user, credential, resetToken } = await userWithResetLink('cross-purpose@example.com');
      const step = await post(
        t,
        '/api/v1/login',
        { email: user.email, password: PASSWORD },
        {},
        nextAddress(),
      );
      assert.equal(step.statusCode, 403, step.body);
      const mfaToken = json<{ mfa_token: string }>(step).mfa_token;

      const mfaCeremony = json<Ceremony>(await passkeyOptions(t, { mfa_token: mfaToken }));
      const discoverable = json<Ceremony>(await passkeyOptions(t, {}));
      for (const [what, ceremony] of [
        ['an mfa_token challenge', mfaCeremony],
        ['a discoverable sign-in challenge', discoverable],
      ] as const) {
        const res = await resetWith(t, resetToken, {
          password: NEW_PASSWORD,
          passkey: passkeyProof(credential, ceremony),
        });
        assert.equal(res.statusCode, 401, `${what}: ${res.body}`);
        assert.equal(json(res).code, 'passkey_invalid', what);
      }
      assert.equal(await linkStatus(t, resetToken), 200, 'the link stays usable');

      const resetChallenge = await resetCeremony(t, resetToken);
      const atLogin = await caller(t)('POST', '/api/v1/login/mfa', {
        mfa_token: mfaToken,
        passkey: passkeyProof(credential, resetChallenge),
      });
      assert.equal(atLogin.statusCode, 401, atLogin.body);
      assert.equal(json(atLogin).code, 'passkey_invalid');
      assert.equal(
        (await caller(t)('POST', '/api/v1/login/passkey', passkeyProof(credential, resetChallenge)))
          .statusCode,
        401,
      );
    });

    it("other-user-passkey-serves-reset: another user's passkey, or a challenge of another user's reset, is refused; both links stay usable", async () => {
      const a = await userWithResetLink('reset-owner-a@example.com');
      const b = await userWithResetLink('reset-owner-b@example.com');

      const bKeyOnA = await resetWith(t, a.resetToken, {
        password: NEW_PASSWORD,
        passkey: passkeyProof(b.credential, await resetCeremony(t, a.resetToken)),
      });
      assert.equal(bKeyOnA.statusCode, 401, `B's passkey on A's reset: ${bKeyOnA.body}`);
      assert.equal(json(bKeyOnA).code, 'passkey_invalid');

      // A's own passkey over a challenge issued for B's reset, presented in A's reset…
      const bChallengeInA = await resetWith(t, a.resetToken, {
        password: NEW_PASSWORD,
        passkey: passkeyProof(a.credential, await resetCeremony(t, b.resetToken)),
      });
      assert.equal(bChallengeInA.statusCode, 401, bChallengeInA.body);
      // …and A's challenge, signed by A, presented in B's reset.
      const aChallengeInB = await resetWith(t, b.resetToken, {
        password: NEW_PASSWORD,
        passkey: passkeyProof(a.credential, await resetCeremony(t, a.resetToken)),
      });
      assert.equal(aChallengeInB.statusCode, 401, aChallengeInB.body);
      assert.equal(json(aChallengeInB).code, 'passkey_invalid');
      assert.equal(await linkStatus(t, a.resetToken), 200);
      assert.equal(await linkStatus(t, b.resetToken), 200);

      const own = await resetWith(t, a.resetToken, {
        password: NEW_PASSWORD,
        passkey: passkeyProof(a.credential, await resetCeremony(t, a.resetToken)),
      });
      assert.equal(own.statusCode, 200, own.body);
    });

    it('passkey and mfa_code at once: 400 validation_failed', async () => {
      const { credential, resetToken } = await userWithResetLink('both-factors@example.com');
      const res = await resetWith(t, resetToken, {
        password: NEW_PASSWORD,
        mfa_code: '123456',
        passkey: passkeyProof(credential, await resetCeremony(t, resetToken)),
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).code, 'validation_failed');
    });

    it('passkeys off, recovery on: methods leave passkey out, a passkey body answers 404 module_disabled, a code still resets', async () => {
      const { user, token } = await userWithSession(t, 'passkeys-off@example.com');
      const { credential } = await registerPasskey(t, token);
      const { secret } = await enableTotp(t, token);
      const resetToken = await mailedResetToken(t, smtp, user.email);
      const ceremony = await resetCeremony(t, resetToken);
      const admin = caller(t, (await sessionFor(t, await firstAdmin(t))).access_token);
      assert.equal(
        // force: accounts hold passkeys (docs/api.md §16 answers 409 module_in_use without it).
        (await admin('PUT', '/api/v1/admin/modules/passkeys', { enabled: false, force: true })).statusCode,
        200,
      );
      try {
        const view = json<{ methods: string[] }>(
          await t.app.inject({ url: `/api/v1/password/reset/${resetToken}` }),
        );
        assert.deepEqual(view.methods, ['totp', 'recovery_code']);
        const bare = json<{ methods: string[] }>(await resetWith(t, resetToken, { password: NEW_PASSWORD }));
        assert.deepEqual(bare.methods, ['totp', 'recovery_code']);
        const options = await passkeyOptions(t, { reset_token: resetToken });
        assert.equal(options.statusCode, 404);
        assert.equal(json(options).code, 'module_disabled');
        const withPasskey = await resetWith(t, resetToken, {
          password: NEW_PASSWORD,
          passkey: passkeyProof(credential, ceremony),
        });
        assert.equal(withPasskey.statusCode, 404, withPasskey.body);
        assert.equal(json(withPasskey).code, 'module_disabled');
        assert.match(json<{ detail: string }>(withPasskey).detail, /passkeys/);
        assert.equal(await linkStatus(t, resetToken), 200);
        const code = await resetWith(t, resetToken, {
          password: NEW_PASSWORD,
          mfa_code: totpCode(secret, 1),
        });
        assert.equal(code.statusCode, 200, code.body);
      } finally {
        await admin('PUT', '/api/v1/admin/modules/passkeys', { enabled: true });
      }
    });
  });
}
