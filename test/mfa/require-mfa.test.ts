import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PASSWORD_LOGIN, signIn } from '../../src/identity/index.ts';
import { startService } from '../../src/kernel/server.ts';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  buildTestApp,
  json,
  PUBLIC_URL,
  type TestApp,
  testEnv,
} from '../helpers/app.ts';
import { auditEntries } from '../helpers/audit.ts';
import { createTestDatabase, DIALECTS } from '../helpers/databases.ts';
import { idpEnv, signInThroughIdp } from '../helpers/idp.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';
import { caller, claimsOf, loginMfa, nextAddress, PASSWORD, registerPasskey, totpCode } from './helpers.ts';

/*
 * REQUIRE_MFA (docs/mfa.md "Requiring a second factor", ASVS 6.3.3): an account the setting covers
 * that signs in with one factor gets an enrolment-only token, never a session that anything else
 * accepts; with a second factor it signs in as usual.
 */

interface Problem {
  code: string;
  enrollment_token?: string;
  expires_in?: number;
  access_token?: string;
  refresh_token?: string;
}

const LOCAL = { ip: '127.0.0.1', userAgent: 'require-mfa-test' };

for (const dialect of DIALECTS) {
  describe(`REQUIRE_MFA=admins [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full', REQUIRE_MFA: 'admins' } });
    });
    after(() => t.destroy());

    const passwordLogin = (email: string, password: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        remoteAddress: nextAddress(),
        payload: { email, password },
      });

    /* admin-without-factor: an admin without a second factor signed in with the password alone and
       got a full session; now the answer is 403 mfa_enrollment_required with an enrolment-only token. */
    it('an admin without a factor gets 403 mfa_enrollment_required with an enrolment-only token, no token pair', async () => {
      const res = await passwordLogin(ADMIN_EMAIL, ADMIN_PASSWORD);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = json<Problem>(res);
      assert.equal(body.code, 'mfa_enrollment_required');
      assert.equal(body.access_token, undefined);
      assert.equal(body.refresh_token, undefined);
      assert.equal(body.expires_in, 600);
      const token = body.enrollment_token as string;
      const claims = claimsOf(token);
      assert.equal(claims.aud, 'urn:gatehouse:mfa-enrollment', 'no resource server takes it for a sign-in');
      assert.deepEqual(claims.amr, ['pwd']);
      const session = await t.ctx.db
        .selectFrom('sessions')
        .selectAll()
        .where('id', '=', claims.sid as string)
        .executeTakeFirstOrThrow();
      assert.ok(Number(session.expires_at) - Number(session.created_at) <= 600_000);
      const refreshTokens = await t.ctx.db
        .selectFrom('refresh_tokens')
        .select('id')
        .where('session_id', '=', session.id)
        .execute();
      assert.equal(refreshTokens.length, 0, 'an enrolment-only session has no refresh token');
      const entry = (await auditEntries(t)).filter((e) => e.action === 'login.success').at(-1);
      assert.equal(JSON.parse(entry?.details ?? '{}').enrollment_only, true);
    });

    /* admin-endpoints-without-factor: an admin session without a second factor reached the admin
       endpoints; now the enrolment-only token and any one-factor admin session get 403. */
    it('the enrolment-only token reaches enrolment only: admin endpoints, verify-token and the rest answer 403', async () => {
      const token = json<Problem>(await passwordLogin(ADMIN_EMAIL, ADMIN_PASSWORD))
        .enrollment_token as string;
      const call = caller(t, token);
      for (const url of [
        '/api/v1/users',
        '/api/v1/admin/modules',
        '/api/v1/verify-token',
        '/api/v1/sessions',
      ]) {
        const res = await call('GET', url);
        assert.equal(res.statusCode, 403, `${url}: ${res.body}`);
        assert.equal(json<Problem>(res).code, 'mfa_enrollment_required', url);
      }
      for (const url of ['/api/v1/mfa', '/api/v1/profile', '/api/v1/passkeys']) {
        assert.equal((await call('GET', url)).statusCode, 200, url);
      }
      // A one-factor admin session opened before REQUIRE_MFA (or by any other way) is held to it too.
      const old = (await sessionFor(t, await firstAdmin(t))).access_token;
      const res = await caller(t, old)('GET', '/api/v1/users');
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(json<Problem>(res).code, 'mfa_enrollment_required');
    });

    it('enrolling TOTP with the enrolment-only token, then signing in with it, opens a full admin session', async () => {
      const admin = await createUser(t, { role: 'admin', password: PASSWORD });
      const first = await passwordLogin(admin.email, PASSWORD);
      const token = json<Problem>(first).enrollment_token as string;
      const call = caller(t, token);
      const enrol = await call('POST', '/api/v1/mfa/totp', { current_password: PASSWORD });
      assert.equal(enrol.statusCode, 200, enrol.body);
      const { secret } = json<{ secret: string }>(enrol);
      const confirm = await call('POST', '/api/v1/mfa/totp/confirm', { code: totpCode(secret) });
      assert.equal(confirm.statusCode, 200, confirm.body);
      // Still enrolment-only: the factor is used at the next sign-in.
      assert.equal((await call('GET', '/api/v1/users')).statusCode, 403);
      const step = await passwordLogin(admin.email, PASSWORD);
      assert.equal(step.statusCode, 403);
      const { code, mfa_token } = json<{ code: string; mfa_token: string }>(step);
      assert.equal(code, 'mfa_required');
      const done = await loginMfa(t, mfa_token, totpCode(secret, 1));
      assert.equal(done.statusCode, 200, done.body);
      const full = json<{ access_token: string; refresh_token: string }>(done);
      assert.equal(claimsOf(full.access_token).aud, t.ctx.config.publicUrl);
      assert.equal((await caller(t, full.access_token)('GET', '/api/v1/users')).statusCode, 200);
      assert.equal((await caller(t, full.access_token)('GET', '/api/v1/verify-token')).statusCode, 200);
      // REQUIRE_MFA needs mfa: switching it off is refused, force or not.
      const off = await caller(t, full.access_token)('PUT', '/api/v1/admin/modules/mfa', {
        enabled: false,
        force: true,
      });
      assert.equal(off.statusCode, 409, off.body);
      assert.match(json<{ detail: string }>(off).detail, /REQUIRE_MFA=admins needs the mfa module/);
      // A password change from the two-factor session opens a full one, not an enrolment-only one.
      const changed = await caller(t, full.access_token)('PUT', '/api/v1/change-password', {
        current_password: PASSWORD,
        new_password: 'another long and unusual passphrase 8',
      });
      assert.equal(changed.statusCode, 200, changed.body);
      const renewed = json<{ access_token: string }>(changed).access_token;
      assert.deepEqual(claimsOf(renewed).amr, ['pwd', 'otp']);
      assert.equal((await caller(t, renewed)('GET', '/api/v1/users')).statusCode, 200);
    });

    it('a passkey counts as two factors: enrolled with the enrolment-only token, its sign-in is full', async () => {
      const admin = await createUser(t, { role: 'admin', password: PASSWORD });
      const token = json<Problem>(await passwordLogin(admin.email, PASSWORD)).enrollment_token as string;
      const { credential } = await registerPasskey(t, token);
      const options = await caller(t)('POST', '/api/v1/passkeys/authentication/options', {});
      const ceremony = json<{ challenge_id: string; options: { challenge: string } }>(options);
      const res = await caller(t)('POST', '/api/v1/login/passkey', {
        challenge_id: ceremony.challenge_id,
        response: credential.assert(
          { challenge: ceremony.options.challenge, rpId: 'gatehouse.test' },
          PUBLIC_URL,
        ),
      });
      assert.equal(res.statusCode, 200, res.body);
      const full = json<{ access_token: string }>(res).access_token;
      assert.equal((await caller(t, full)('GET', '/api/v1/users')).statusCode, 200);
    });

    it('a user is not covered by REQUIRE_MFA=admins: the password alone signs in as before', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const res = await passwordLogin(user.email, PASSWORD);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(claimsOf(json<{ access_token: string }>(res).access_token).aud, t.ctx.config.publicUrl);
    });

    /* oauth-sign-in-without-factor: every way in ends in signIn; one factor for an OAuth
       client's grant opens nothing (403), and a provider's or an e-mail code's one factor is
       enrolment-only like the password's. */
    it('signIn: one factor opens an enrolment-only session for every way in, and none for an OAuth client', async () => {
      const admin = await createUser(t, { role: 'admin', password: PASSWORD });
      for (const amr of [['pwd'], ['fed'], ['otp']]) {
        const { tokens: answer } = await t.ctx.db
          .transaction()
          .execute((trx) =>
            signIn(t.ctx, trx, { user: admin, client: LOCAL, amr, details: { method: 'test' } }),
          );
        assert.equal(answer.access_token, '', `${amr}: no access token in the answer`);
        assert.equal(answer.refresh_token, '', `${amr}: no refresh token in the answer`);
      }
      await assert.rejects(
        t.ctx.db.transaction().execute((trx) =>
          signIn(t.ctx, trx, {
            user: admin,
            client: LOCAL,
            amr: PASSWORD_LOGIN.amr,
            details: { method: 'oauth' },
            opening: { oauthGrant: { clientId: 'some-client', parentId: null, authTime: Date.now() } },
          }),
        ),
        (err: Error & { code?: string }) => err.code === 'mfa_enrollment_required',
      );
      const { tokens: full } = await t.ctx.db.transaction().execute((trx) =>
        signIn(t.ctx, trx, {
          user: admin,
          client: LOCAL,
          amr: ['fed', 'otp'],
          details: { method: 'test' },
        }),
      );
      assert.notEqual(full.refresh_token, '');
    });
  });

  describe(`REQUIRE_MFA at start [${dialect}]`, () => {
    it('is off by default, and refuses an unknown value', () => {
      assert.equal(loadConfig({}).requireMfa, 'off');
      assert.equal(loadConfig({ REQUIRE_MFA: 'ALL' }).requireMfa, 'all');
      assert.throws(
        () => loadConfig({ REQUIRE_MFA: 'yes' }),
        /REQUIRE_MFA must be off, admins or all, got "yes"/,
      );
    });

    it('the start fails with one line while the mfa module is off (form A)', async () => {
      const database = await createTestDatabase(dialect);
      try {
        const config = loadConfig(testEnv(database.url, { REQUIRE_MFA: 'all' }));
        await assert.rejects(
          startService(config, createLogger('silent')),
          (err: Error) =>
            err instanceof ConfigError &&
            err.message ===
              'REQUIRE_MFA=all needs the mfa module on (API_FORM=full, or switch mfa on), or set REQUIRE_MFA=off',
        );
      } finally {
        await database.drop();
      }
    });
  });

  describe(`REQUIRE_MFA=all [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full', REQUIRE_MFA: 'all' } });
    });
    after(() => t.destroy());

    it('a user without a factor gets the enrolment-only answer; refreshing an old one-factor session gives no full token', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const res = await caller(t)('POST', '/api/v1/login', { email: user.email, password: PASSWORD });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(json<Problem>(res).code, 'mfa_enrollment_required');
      const old = await sessionFor(t, user);
      const refreshed = await caller(t)('POST', '/api/v1/refresh-token', {
        refresh_token: old.refresh_token,
      });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      const next = json<{ access_token: string }>(refreshed).access_token;
      assert.equal(claimsOf(next).aud, 'urn:gatehouse:mfa-enrollment');
      assert.equal((await caller(t, next)('GET', '/api/v1/verify-token')).statusCode, 403);
    });
  });

  describe(`REQUIRE_MFA=all, an external provider's sign-in [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;
    before(async () => {
      op = await startOidcProvider();
      t = await buildTestApp(dialect, { env: idpEnv(op, { API_FORM: 'full', REQUIRE_MFA: 'all' }) });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    /* provider-sign-in-without-factor: POST /idp/verify opened a full session with amr ["fed"];
       under REQUIRE_MFA it answers the enrolment-only token like a password sign-in. */
    it('POST /idp/verify of an account without a factor answers 403 mfa_enrollment_required, no token pair', async () => {
      const res = await signInThroughIdp(t, op, 'alice');
      assert.equal(res.statusCode, 403, res.body);
      const body = json<Problem & { created?: boolean }>(res);
      assert.equal(body.code, 'mfa_enrollment_required');
      assert.equal(body.access_token, undefined);
      assert.equal(body.refresh_token, undefined);
      const claims = claimsOf(body.enrollment_token as string);
      assert.equal(claims.aud, 'urn:gatehouse:mfa-enrollment');
      assert.deepEqual(claims.amr, ['fed']);
      assert.equal((await caller(t, body.enrollment_token)('GET', '/api/v1/verify-token')).statusCode, 403);
    });
  });
}
