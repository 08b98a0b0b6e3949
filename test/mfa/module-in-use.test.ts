import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { cliResetLink } from '../../src/modules/recovery/reset-link-admin.service.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  buildTestApp,
  json,
  PUBLIC_URL,
  TEST_SECRETS_KEY,
  type TestApp,
} from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';
import type { SoftCredential } from '../support/webauthn-authenticator.ts';
import { caller, enableTotp, PASSWORD, passwordStep, registerPasskey, userWithSession } from './helpers.ts';

// docs/api.md §16 "A sign-in method never silently disappears": switching `mfa` or `passkeys` off
// used to drop every enrolled account to password-only, on every instance, without a word.
const NEW_PASSWORD = 'another long passphrase 81';
const FULL = { API_FORM: 'full' };

const login = (t: TestApp, email: string, password = PASSWORD) =>
  caller(t)('POST', '/api/v1/login', { email, password });

async function passkeyLogin(t: TestApp, credential: SoftCredential) {
  const options = await caller(t)('POST', '/api/v1/passkeys/authentication/options', {});
  assert.equal(options.statusCode, 200, options.body);
  const ceremony = json<{ challenge_id: string; options: { challenge: string } }>(options);
  const response = credential.assert(
    { challenge: ceremony.options.challenge, rpId: 'gatehouse.test' },
    PUBLIC_URL,
  );
  return caller(t)('POST', '/api/v1/login/passkey', { challenge_id: ceremony.challenge_id, response });
}

function assertCode(res: LightMyRequestResponse, status: number, code: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(json(res).code, code, res.body);
}

for (const dialect of DIALECTS) {
  describe(`switching a factor's module off [${dialect}]`, () => {
    let t: TestApp;
    let admin: ReturnType<typeof caller>;
    before(async () => {
      t = await buildTestApp(dialect, { env: FULL });
      admin = caller(t, (await sessionFor(t, await firstAdmin(t))).access_token);
    });
    after(() => t.destroy());

    it('module-off-downgrades-accounts: mfa off with an enrolled user → 409, force → off; password login and reset → 403 second_factor_unavailable; users mfa-reset frees it', async () => {
      const { user, token } = await userWithSession(t, 'totp-holder@example.com');
      await enableTotp(t, token);
      try {
        const refused = await admin('PUT', '/api/v1/admin/modules/mfa', { enabled: false });
        assertCode(refused, 409, 'module_in_use');
        assert.match(json<{ detail: string }>(refused).detail, /^1 account holds a second factor/);
        assert.equal(t.ctx.modules.isEnabled('mfa'), true, 'nothing changed');

        const forced = await admin('PUT', '/api/v1/admin/modules/mfa', { enabled: false, force: true });
        assert.equal(forced.statusCode, 200, forced.body);
        assert.equal(json(forced).enabled, false);

        // The right password alone no longer signs in (it used to, with amr ["pwd"]).
        assertCode(await login(t, user.email), 403, 'second_factor_unavailable');
        assertCode(await login(t, user.email, 'a wrong password, long enough'), 401, 'invalid_credentials');
        // Nor does a password reset get around the factor.
        const link = await cliResetLink(t.ctx, user.email);
        const resetToken = link.url.split('/').pop() as string;
        assertCode(
          await caller(t)('GET', `/api/v1/password/reset/${resetToken}`),
          403,
          'second_factor_unavailable',
        );
        const reset = await caller(t)('POST', `/api/v1/password/reset/${resetToken}`, {
          password: NEW_PASSWORD,
        });
        assertCode(reset, 403, 'second_factor_unavailable');
        assertCode(await login(t, user.email), 403, 'second_factor_unavailable');

        const cli = await runCli(
          ['users', 'mfa-reset', '--email', 'TOTP-holder@example.com'],
          t.databaseUrl,
          {
            PUBLIC_URL,
            ADMIN_EMAIL,
            ADMIN_PASSWORD,
            SECRETS_KEY: TEST_SECRETS_KEY,
            ...FULL,
          },
        );
        assert.equal(cli.code, 0, cli.stderr);
        assert.match(cli.stdout, /^reset totp-holder@example\.com: TOTP, 0 passkey\(s\)/);
        const signedIn = await login(t, user.email);
        assert.equal(signedIn.statusCode, 200, signedIn.body);

        const ghost = await runCli(['users', 'mfa-reset', '--email', 'ghost@example.com'], t.databaseUrl, {
          SECRETS_KEY: TEST_SECRETS_KEY,
        });
        assert.notEqual(ghost.code, 0);
        assert.equal(ghost.stderr.trim().split('\n').length, 1, ghost.stderr);
      } finally {
        await admin('PUT', '/api/v1/admin/modules/mfa', { enabled: true });
      }
    });

    it('module-off-downgrades-accounts (passkeys): passkeys off with passkey holders → 409, force → off; a passkey-only account → 403 second_factor_unavailable, one with TOTP too still signs in with TOTP; the admin reset frees it', async () => {
      const only = await userWithSession(t, 'passkey-only@example.com');
      await registerPasskey(t, only.token);
      const both = await userWithSession(t, 'passkey-and-totp@example.com');
      await registerPasskey(t, both.token);
      await enableTotp(t, both.token);
      try {
        const refused = await admin('PUT', '/api/v1/admin/modules/passkeys', { enabled: false });
        assertCode(refused, 409, 'module_in_use');
        assert.match(json<{ detail: string }>(refused).detail, /^2 accounts hold a passkey/);
        const forced = await admin('PUT', '/api/v1/admin/modules/passkeys', { enabled: false, force: true });
        assert.equal(forced.statusCode, 200, forced.body);

        assertCode(await login(t, only.user.email), 403, 'second_factor_unavailable');
        const step = await passwordStep(t, both.user);
        assert.deepEqual(step.methods, ['totp', 'recovery_code'], 'TOTP is still two factors');

        const reset = await admin('DELETE', `/api/v1/users/${only.user.id}/mfa`);
        assert.equal(reset.statusCode, 204, reset.body);
        assert.equal((await login(t, only.user.email)).statusCode, 200);
        // Off already: switching off again is no switch, and asks nothing.
        assert.equal(
          (await admin('PUT', '/api/v1/admin/modules/passkeys', { enabled: false })).statusCode,
          200,
        );
      } finally {
        await admin('PUT', '/api/v1/admin/modules/passkeys', { enabled: true });
      }
    });
  });

  describe(`force never locks out the last admin [${dialect}]`, () => {
    it('module-off-downgrades-accounts: the only admin holds TOTP → mfa off with force is 409 module_in_use; another admin without factors → allowed', async () => {
      const t = await buildTestApp(dialect, { env: FULL });
      try {
        const token = (await sessionFor(t, await firstAdmin(t))).access_token;
        const admin = caller(t, token);
        await enableTotp(t, token, ADMIN_PASSWORD);
        const forced = await admin('PUT', '/api/v1/admin/modules/mfa', { enabled: false, force: true });
        assertCode(forced, 409, 'module_in_use');
        assert.match(json<{ detail: string }>(forced).detail, /no active admin able to sign in/);
        assert.equal(t.ctx.modules.isEnabled('mfa'), true);
        // A disabled admin does not count.
        await createUser(t, { role: 'admin', status: 'disabled', password: PASSWORD });
        assertCode(
          await admin('PUT', '/api/v1/admin/modules/mfa', { enabled: false, force: true }),
          409,
          'module_in_use',
        );
        await createUser(t, { role: 'admin', password: PASSWORD });
        const allowed = await admin('PUT', '/api/v1/admin/modules/mfa', { enabled: false, force: true });
        assert.equal(allowed.statusCode, 200, allowed.body);
        assertCode(await login(t, ADMIN_EMAIL, ADMIN_PASSWORD), 403, 'second_factor_unavailable');
      } finally {
        await t.destroy();
      }
    });

    it('module-off-downgrades-accounts (passkeys): the only admin holds a passkey only → passkeys off with force is 409; mfa off is allowed (a passkey signs in alone) and the passkey still signs in', async () => {
      const t = await buildTestApp(dialect, { env: FULL });
      try {
        const token = (await sessionFor(t, await firstAdmin(t))).access_token;
        const admin = caller(t, token);
        const { credential } = await registerPasskey(t, token, {}, ADMIN_PASSWORD);
        const forced = await admin('PUT', '/api/v1/admin/modules/passkeys', { enabled: false, force: true });
        assertCode(forced, 409, 'module_in_use');
        assert.match(json<{ detail: string }>(forced).detail, /no active admin able to sign in/);
        assert.equal(t.ctx.modules.isEnabled('passkeys'), true);

        const mfaOff = await admin('PUT', '/api/v1/admin/modules/mfa', { enabled: false, force: true });
        assert.equal(mfaOff.statusCode, 200, mfaOff.body);
        // The password alone would be fewer factors; the passkey is a whole sign-in.
        assertCode(await login(t, ADMIN_EMAIL, ADMIN_PASSWORD), 403, 'second_factor_unavailable');
        const byPasskey = await passkeyLogin(t, credential);
        assert.equal(byPasskey.statusCode, 200, byPasskey.body);
        // With mfa off, passkeys off would leave the admin no way in at all.
        assertCode(
          await admin('PUT', '/api/v1/admin/modules/passkeys', { enabled: false, force: true }),
          409,
          'module_in_use',
        );
      } finally {
        await t.destroy();
      }
    });
  });
}
