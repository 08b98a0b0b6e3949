import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { auditEntries } from '../helpers/audit.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';
import {
  caller,
  claimsOf,
  enableTotp,
  loginMfa,
  nextAddress,
  PASSWORD,
  passwordStep,
  totpCode,
  userWithSession,
} from './helpers.ts';

for (const dialect of DIALECTS) {
  describe(`TOTP and recovery codes [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    it('enrol → confirm → log in with password + TOTP', async () => {
      const { user, token } = await userWithSession(t);
      const call = caller(t, token);
      const enrol = await call('POST', '/api/v1/mfa/totp', { current_password: PASSWORD });
      assert.equal(enrol.statusCode, 200);
      const body = json<{ secret: string; otpauth_url: string; qr_svg: string }>(enrol);
      assert.match(body.secret, /^[A-Z2-7]{32}$/, '160-bit secret in base32');
      const url = new URL(body.otpauth_url);
      assert.equal(url.protocol, 'otpauth:');
      assert.equal(url.host, 'totp');
      assert.equal(decodeURIComponent(url.pathname), `/Gatehouse:${user.email}`);
      assert.equal(url.searchParams.get('issuer'), 'Gatehouse');
      assert.equal(url.searchParams.get('secret'), body.secret);
      assert.match(body.qr_svg, /^<svg[\s\S]*<\/svg>\s*$/);

      // Pending: not yet a factor.
      const before = await call('GET', '/api/v1/mfa');
      assert.deepEqual(json(before), {
        totp: { enabled: false, created_at: null },
        recovery_codes_remaining: 0,
        passkeys: 0,
      });

      const confirm = await call('POST', '/api/v1/mfa/totp/confirm', { code: totpCode(body.secret) });
      assert.equal(confirm.statusCode, 200);
      const codes = json<{ recovery_codes: string[] }>(confirm).recovery_codes;
      assert.equal(codes.length, 10);
      for (const c of codes)
        assert.match(c, /^[a-z2-7]{5}(-[a-z2-7]{5}){4}$/, '125 bits: 25 base32 characters');
      assert.equal(new Set(codes).size, 10);

      const status = json<{ totp: { enabled: boolean }; recovery_codes_remaining: number }>(
        await call('GET', '/api/v1/mfa'),
      );
      assert.equal(status.totp.enabled, true);
      assert.equal(status.recovery_codes_remaining, 10);
      const profile = json<{ mfa?: unknown }>(await call('GET', '/api/v1/profile'));
      assert.deepEqual(profile.mfa, json(await call('GET', '/api/v1/mfa')), 'the profile shows the factors');

      const step = await passwordStep(t, user);
      assert.equal(step.code, 'mfa_required');
      assert.deepEqual(step.methods, ['totp', 'recovery_code']);
      assert.match(step.mfa_token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(step.res.headers['content-type'], 'application/problem+json; charset=utf-8');

      const done = await loginMfa(t, step.mfa_token, totpCode(body.secret, 1));
      assert.equal(done.statusCode, 200, done.body);
      const tokens = json<{ user: { id: string }; access_token: string; refresh_token: string }>(done);
      assert.equal(tokens.user.id, user.id);
      const claims = claimsOf(tokens.access_token);
      assert.deepEqual(claims.amr, ['pwd', 'otp']);
      assert.equal(typeof claims.auth_time, 'number');
      const verified = json<{ claims: Record<string, unknown> }>(
        await caller(t, tokens.access_token)('GET', '/api/v1/verify-token'),
      );
      assert.deepEqual(verified.claims.amr, ['pwd', 'otp']);
      // A refresh keeps amr and auth_time unchanged.
      const refreshed = await t.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        payload: { refresh_token: tokens.refresh_token },
      });
      const after = claimsOf(json<{ access_token: string }>(refreshed).access_token);
      assert.deepEqual([after.amr, after.auth_time], [['pwd', 'otp'], claims.auth_time]);
      // The mfa_token is single-use.
      const again = await loginMfa(t, step.mfa_token, totpCode(body.secret, 1));
      assert.equal(json(again).code, 'mfa_token_invalid');
    });

    it('the same TOTP code is refused a second time (replay, RFC 6238 §5.2)', async () => {
      const { user, token } = await userWithSession(t);
      const { secret } = await enableTotp(t, token);
      const code = totpCode(secret, 1);
      const first = await loginMfa(t, (await passwordStep(t, user)).mfa_token, code);
      assert.equal(first.statusCode, 200);
      const replay = await loginMfa(t, (await passwordStep(t, user)).mfa_token, code);
      assert.equal(replay.statusCode, 401);
      assert.equal(json(replay).code, 'mfa_code_invalid');
      // The step confirmed at enrolment is spent too.
      const confirmed = await loginMfa(t, (await passwordStep(t, user)).mfa_token, totpCode(secret, -1));
      assert.equal(confirmed.statusCode, 401);
    });

    it('two logins racing with one TOTP code: exactly one succeeds', async () => {
      const { user, token } = await userWithSession(t);
      const { secret } = await enableTotp(t, token);
      const code = totpCode(secret, 1);
      const tokens = await Promise.all([passwordStep(t, user), passwordStep(t, user), passwordStep(t, user)]);
      const results = await Promise.all(tokens.map((s) => loginMfa(t, s.mfa_token, code)));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401, 401]);
    });

    it('a recovery code works once, typed in any case with dashes or spaces', async () => {
      const { user, token } = await userWithSession(t);
      const { recoveryCodes } = await enableTotp(t, token);
      const code = recoveryCodes[3] as string;
      const typed = ` ${code.toUpperCase().replace('-', ' ')} `;
      const first = await loginMfa(t, (await passwordStep(t, user)).mfa_token, typed);
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(claimsOf(json<{ access_token: string }>(first).access_token).amr, ['pwd', 'mfa']);
      const second = await loginMfa(t, (await passwordStep(t, user)).mfa_token, code);
      assert.equal(second.statusCode, 401);
      assert.equal(json(second).code, 'mfa_code_invalid');
      const status = json<{ recovery_codes_remaining: number }>(await caller(t, token)('GET', '/api/v1/mfa'));
      // The session that enrolled survives; the code count dropped by one.
      assert.equal(status.recovery_codes_remaining, 9);
    });

    it('one recovery code used concurrently: exactly one sign-in', async () => {
      const { user, token } = await userWithSession(t);
      const { recoveryCodes } = await enableTotp(t, token);
      const steps = await Promise.all(Array.from({ length: 6 }, () => passwordStep(t, user)));
      const results = await Promise.all(
        steps.map((s) => loginMfa(t, s.mfa_token, recoveryCodes[0] as string)),
      );
      const statuses = results.map((r) => r.statusCode);
      assert.equal(statuses.filter((s) => s === 200).length, 1, String(statuses));
      assert.equal(statuses.filter((s) => s === 401).length, 5);
    });

    it('disable with a code: TOTP and recovery codes go, login needs the password only', async () => {
      const { user, token } = await userWithSession(t);
      const { secret } = await enableTotp(t, token);
      const call = caller(t, token);
      const wrong = await call('DELETE', '/api/v1/mfa/totp', { code: '000000' });
      assert.equal(wrong.statusCode, 401);
      assert.equal(json(wrong).code, 'mfa_code_invalid');
      const res = await call('DELETE', '/api/v1/mfa/totp', { code: totpCode(secret, 1) });
      assert.equal(res.statusCode, 204);
      assert.deepEqual(json(await call('GET', '/api/v1/mfa')), {
        totp: { enabled: false, created_at: null },
        recovery_codes_remaining: 0,
        passkeys: 0,
      });
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        remoteAddress: nextAddress(),
        payload: { email: user.email, password: PASSWORD },
      });
      assert.equal(login.statusCode, 200);
    });

    it('confirming TOTP revokes every other session; a second enrolment is 409 mfa_already_enabled', async () => {
      const { user, token } = await userWithSession(t);
      const otherToken = (await sessionFor(t, user)).access_token;
      await enableTotp(t, token);
      const verifyOther = await caller(t, otherToken)('GET', '/api/v1/verify-token');
      assert.equal(verifyOther.statusCode, 401);
      assert.equal(json(verifyOther).code, 'session_revoked');
      assert.equal((await caller(t, token)('GET', '/api/v1/verify-token')).statusCode, 200);
      const again = await caller(t, token)('POST', '/api/v1/mfa/totp', { current_password: PASSWORD });
      assert.equal(again.statusCode, 409);
      assert.equal(json(again).code, 'mfa_already_enabled');
    });

    it('a wrong current password at enrolment is 401 invalid_credentials and counts like a failed login', async () => {
      const { user, token } = await userWithSession(t);
      const ip = nextAddress();
      const call = caller(t, token, ip);
      for (let i = 0; i < 5; i++) {
        const res = await call('POST', '/api/v1/mfa/totp', { current_password: 'not the password at all' });
        assert.equal(res.statusCode, 401);
        assert.equal(json(res).code, 'invalid_credentials');
      }
      const limited = await call('POST', '/api/v1/mfa/totp', { current_password: PASSWORD });
      assert.equal(limited.statusCode, 429);
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        remoteAddress: ip,
        payload: { email: user.email, password: PASSWORD },
      });
      assert.equal(login.statusCode, 429, 'the password login shares the budget');
    });

    it('a second enrolment while one is pending replaces the pending secret', async () => {
      const { token } = await userWithSession(t);
      const call = caller(t, token);
      const first = json<{ secret: string }>(
        await call('POST', '/api/v1/mfa/totp', { current_password: PASSWORD }),
      );
      const second = json<{ secret: string }>(
        await call('POST', '/api/v1/mfa/totp', { current_password: PASSWORD }),
      );
      assert.notEqual(first.secret, second.secret);
      const stale = await call('POST', '/api/v1/mfa/totp/confirm', { code: totpCode(first.secret) });
      assert.equal(stale.statusCode, 401);
      const good = await call('POST', '/api/v1/mfa/totp/confirm', { code: totpCode(second.secret) });
      assert.equal(good.statusCode, 200);
    });

    it('the secret is stored encrypted: a database dump does not reveal it', async () => {
      const { user, token } = await userWithSession(t);
      const { secret } = await enableTotp(t, token);
      const row = await t.ctx.db
        .selectFrom('mfa_totp')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      const raw = Buffer.from((await import('@oslojs/encoding')).decodeBase32IgnorePadding(secret));
      assert.ok(!row.secret_box.includes(secret));
      assert.ok(!row.secret_box.includes(raw.toString('base64url')));
      assert.ok(!row.secret_box.includes(raw.toString('hex')));
      const codes = await t.ctx.db
        .selectFrom('mfa_recovery_codes')
        .select('code_hash')
        .where('user_id', '=', user.id)
        .execute();
      assert.equal(codes.length, 10);
    });

    it('recovery codes: a new set replaces the old one (with a TOTP or a recovery code)', async () => {
      const { user, token } = await userWithSession(t);
      const { secret, recoveryCodes } = await enableTotp(t, token);
      const call = caller(t, token);
      const bad = await call('POST', '/api/v1/mfa/recovery-codes', { code: 'aaaaa-aaaaa' });
      assert.equal(bad.statusCode, 401);
      const res = await call('POST', '/api/v1/mfa/recovery-codes', { code: recoveryCodes[9] as string });
      assert.equal(res.statusCode, 200);
      const fresh = json<{ recovery_codes: string[] }>(res).recovery_codes;
      assert.equal(fresh.length, 10);
      const old = await loginMfa(t, (await passwordStep(t, user)).mfa_token, recoveryCodes[0] as string);
      assert.equal(old.statusCode, 401, 'the old set died');
      const viaTotp = await call('POST', '/api/v1/mfa/recovery-codes', { code: totpCode(secret, 1) });
      assert.equal(viaTotp.statusCode, 200);
    });

    it('an mfa_token dies after 5 wrong codes', async () => {
      const { user, token } = await userWithSession(t);
      const { secret } = await enableTotp(t, token);
      // Tries from different addresses: the account-and-address throttle stays out of the way.
      const { mfa_token } = await passwordStep(t, user);
      for (let i = 0; i < 5; i++) {
        const res = await loginMfa(t, mfa_token, '000000');
        assert.equal(json(res).code, 'mfa_code_invalid');
      }
      const sixth = await loginMfa(t, mfa_token, totpCode(secret, 1));
      assert.equal(sixth.statusCode, 401);
      assert.equal(json(sixth).code, 'mfa_token_invalid');
    });

    it('an expired mfa_token is refused with 401 mfa_token_invalid', async () => {
      const { user, token } = await userWithSession(t);
      const { secret } = await enableTotp(t, token);
      const { mfa_token } = await passwordStep(t, user);
      await t.ctx.db
        .updateTable('mfa_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('user_id', '=', user.id)
        .execute();
      const res = await loginMfa(t, mfa_token, totpCode(secret, 1));
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'mfa_token_invalid');
      const unknown = await loginMfa(t, 'x'.repeat(43), totpCode(secret, 1));
      assert.equal(json(unknown).code, 'mfa_token_invalid');
    });

    it('wrong codes count toward the account throttle, and 429 wins over a spent mfa_token', async () => {
      const { user, token } = await userWithSession(t);
      const { secret } = await enableTotp(t, token);
      const ip = nextAddress();
      const { mfa_token } = await passwordStep(t, user, ip);
      for (let i = 0; i < 5; i++) {
        assert.equal((await loginMfa(t, mfa_token, '000000', ip)).statusCode, 401);
      }
      // Both the token's 5 tries and the account's 5 failures are spent: 429 answers.
      const res = await loginMfa(t, mfa_token, totpCode(secret, 1), ip);
      assert.equal(res.statusCode, 429);
      assert.equal(json(res).code, 'rate_limited');
      assert.ok(Number(res.headers['retry-after']) > 0);
      const password = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        remoteAddress: ip,
        payload: { email: user.email, password: PASSWORD },
      });
      assert.equal(password.statusCode, 429);
    });

    it('a completed sign-in clears the account failures; a correct password alone does not', async () => {
      const { user, token } = await userWithSession(t);
      const { secret } = await enableTotp(t, token);
      const ip = nextAddress();
      const first = await passwordStep(t, user, ip);
      for (let i = 0; i < 4; i++) await loginMfa(t, first.mfa_token, '000000', ip);
      const second = await passwordStep(t, user, ip);
      const done = await loginMfa(t, second.mfa_token, totpCode(secret, 1), ip);
      assert.equal(done.statusCode, 200);
      const third = await passwordStep(t, user, ip);
      for (let i = 0; i < 4; i++) {
        assert.equal((await loginMfa(t, third.mfa_token, '000000', ip)).statusCode, 401);
      }
    });

    it('admin reset removes every factor and revokes the sessions', async () => {
      const { user, token } = await userWithSession(t);
      await enableTotp(t, token);
      await passwordStep(t, user);
      const adminToken = (await sessionFor(t, await firstAdmin(t))).access_token;
      const notAdmin = await caller(t, token)('DELETE', `/api/v1/users/${user.id}/mfa`);
      assert.equal(notAdmin.statusCode, 403);
      const res = await caller(t, adminToken)('DELETE', `/api/v1/users/${user.id}/mfa`);
      assert.equal(res.statusCode, 204);
      assert.equal(json(await caller(t, token)('GET', '/api/v1/mfa')).code, 'session_revoked');
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        remoteAddress: nextAddress(),
        payload: { email: user.email, password: PASSWORD },
      });
      assert.equal(login.statusCode, 200);
      const unknown = await caller(t, adminToken)(
        'DELETE',
        '/api/v1/users/0190a000-0000-7000-8000-000000000000/mfa',
      );
      assert.equal(unknown.statusCode, 404);
      const actions = (await auditEntries(t)).filter((e) => e.target_id === user.id).map((e) => e.action);
      for (const a of ['mfa.totp_enroll', 'mfa.totp_enable', 'mfa.reset', 'login.mfa_required']) {
        assert.ok(actions.includes(a), `${a} audited`);
      }
    });

    it('a user without factors logs in with the password alone (no mfa_token)', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        remoteAddress: nextAddress(),
        payload: { email: user.email, password: PASSWORD },
      });
      assert.equal(res.statusCode, 200);
    });
  });
}
