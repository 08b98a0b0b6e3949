import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { auditEntries } from '../helpers/audit.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { sessionFor } from '../helpers/users.ts';
import {
  caller,
  claimsOf,
  enableTotp,
  loginMfa,
  PASSWORD,
  passwordStep,
  registerPasskey,
  userWithSession,
} from './helpers.ts';

/*
 * docs/mfa.md "A new factor ends the other sessions": the account's first second factor, whatever
 * its kind, revokes every other session of the user in the transaction that stores it.
 */
for (const dialect of DIALECTS) {
  describe(`a first second factor ends the other sessions [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    const verify = (token: string) => caller(t, token)('GET', '/api/v1/verify-token');
    const mintCodes = (token: string) =>
      caller(t, token)('POST', '/api/v1/mfa/recovery-codes', { current_password: PASSWORD });

    /** The last entry of an action, its details parsed. */
    async function lastDetails(action: string): Promise<Record<string, unknown>> {
      const rows = (await auditEntries(t)).filter((r) => r.action === action);
      const row = rows.at(-1);
      assert.ok(row, `no ${action} entry`);
      return JSON.parse(row.details);
    }

    /**
     * The reproduction: an old password-only session mints recovery codes with the password alone,
     * then password plus one of them signs in as `["pwd","mfa"]`. Now the old session is revoked
     * (401 `session_revoked`), mints nothing, and the password alone still meets `mfa_required`.
     */
    async function oldSessionCannotBypass(user: Parameters<typeof passwordStep>[1], oldToken: string) {
      assert.equal((await verify(oldToken)).statusCode, 401);
      const minted = await mintCodes(oldToken);
      assert.equal(minted.statusCode, 401, minted.body);
      assert.equal(json<{ code: string }>(minted).code, 'session_revoked');
      const step = await passwordStep(t, user);
      assert.equal(step.code, 'mfa_required');
    }

    /* first-passkey-keeps-sessions: adding a first passkey left password-only sessions alive, and one
       of them minted recovery codes that signed in as ["pwd","mfa"]; now they end with the passkey. */
    it('a first passkey revokes every other session, and the old session cannot mint recovery codes', async () => {
      const { user, token } = await userWithSession(t);
      const old = (await sessionFor(t, user)).access_token;
      const other = (await sessionFor(t, user)).access_token;
      await registerPasskey(t, token);
      assert.equal((await verify(token)).statusCode, 200, 'the session that added the passkey stays');
      assert.equal((await verify(other)).statusCode, 401);
      await oldSessionCannotBypass(user, old);
      assert.equal((await lastDetails('passkey.add')).sessions_revoked, 2);
      const row = await t.ctx.db
        .selectFrom('sessions')
        .select('revoked_reason')
        .where('id', '=', claimsOf(old).sid as string)
        .executeTakeFirstOrThrow();
      assert.equal(row.revoked_reason, 'mfa_enabled');
    });

    /* first-totp-keeps-sessions: TOTP confirmation already revoked the other sessions; pinned here
       with the same reproduction so the two kinds cannot drift apart. */
    it('a first TOTP revokes every other session, and the old session cannot mint recovery codes', async () => {
      const { user, token } = await userWithSession(t);
      const old = (await sessionFor(t, user)).access_token;
      await enableTotp(t, token);
      assert.equal((await verify(token)).statusCode, 200);
      await oldSessionCannotBypass(user, old);
      assert.equal((await lastDetails('mfa.totp_enable')).sessions_revoked, 1);
    });

    /* recovery-codes-as-first-factor: recovery codes only back up a factor; a password-only session
       cannot make them the account's first "factor" (404), so no session outlives a factor that way. */
    it('recovery codes are never a first factor: without TOTP or a passkey none are minted', async () => {
      const { user, token } = await userWithSession(t);
      const other = (await sessionFor(t, user)).access_token;
      const res = await mintCodes(token);
      assert.equal(res.statusCode, 404, res.body);
      const count = await t.ctx.db
        .selectFrom('mfa_recovery_codes')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 0);
      assert.equal((await verify(other)).statusCode, 200);
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: user.email, password: PASSWORD },
      });
      assert.equal(login.statusCode, 200, 'no factor: the password alone still signs in');
    });

    /* later-factor-keeps-sessions: a later passkey or a new recovery-code set ends nothing, since
       every other session was opened under the factor the account already had (docs/mfa.md; TOTP
       confirmation alone always signs out, API §13). */
    it('a second passkey and a new recovery-code set leave the sessions opened with a factor alive', async () => {
      const { user, token } = await userWithSession(t);
      const { recoveryCodes } = await enableTotp(t, token);
      const step = await passwordStep(t, user);
      const mfa = await loginMfa(t, step.mfa_token, recoveryCodes[0] as string);
      assert.equal(mfa.statusCode, 200, mfa.body);
      const withFactor = json<{ access_token: string }>(mfa).access_token;
      assert.deepEqual(claimsOf(withFactor).amr, ['pwd', 'mfa']);
      await registerPasskey(t, token);
      assert.equal((await verify(withFactor)).statusCode, 200);
      assert.equal((await lastDetails('passkey.add')).sessions_revoked, 0);
      const regenerated = await mintCodes(token);
      assert.equal(regenerated.statusCode, 200, regenerated.body);
      assert.equal((await verify(withFactor)).statusCode, 200);
    });
  });
}
