import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ACCOUNT_FAILURE_LIMIT } from '../../src/identity/budgets/throttle.ts';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { firstAdmin, sessionFor } from '../helpers/users.ts';
import type { SoftCredential } from '../support/webauthn-authenticator.ts';
import {
  caller,
  enableTotp,
  nextAddress,
  PASSWORD,
  registerPasskey,
  totpCode,
  userWithSession,
} from './helpers.ts';

// docs/api.md §16 "Removing a factor needs a fresh proof": a stolen access token alone could remove a
// passkey (and with the last one the recovery codes), turn TOTP off or take the recovery codes. The
// three endpoints, and the e-mail change, now take the current password, a TOTP or recovery code, or
// a passkey over a challenge bound to the caller; no proof is 401 reauthentication_required.

type Proof = 'password' | 'totp' | 'recovery code' | 'passkey';
const PROOFS: Proof[] = ['password', 'totp', 'recovery code', 'passkey'];

interface Account {
  token: string;
  userId: string;
  email: string;
  secret: string;
  recoveryCodes: string[];
  credential: SoftCredential;
  passkeyId: string;
  address: string;
  call: ReturnType<typeof caller>;
}

const status = (res: LightMyRequestResponse, code: number, problem?: string) => {
  assert.equal(res.statusCode, code, res.body);
  if (problem !== undefined) assert.equal(json(res).code, problem);
};

for (const dialect of DIALECTS) {
  describe(`fresh proof for factor changes (docs/api.md §16) [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    /** A user with TOTP, recovery codes and one passkey, and a caller bound to one client address. */
    async function account(): Promise<Account> {
      const { user, token } = await userWithSession(t);
      const { secret, recoveryCodes } = await enableTotp(t, token);
      // Confirming TOTP ended every other session; the caller's own session stays.
      const { credential, id } = await registerPasskey(t, token);
      const address = nextAddress();
      return {
        address,
        token,
        userId: user.id,
        email: user.email,
        secret,
        recoveryCodes,
        credential,
        passkeyId: id,
        call: caller(t, token, address),
      };
    }

    /** A passkey proof over a challenge asked for with the caller's Bearer token and `{}`. */
    async function passkeyProof(a: Account, credential = a.credential) {
      const opts = await a.call('POST', '/api/v1/passkeys/authentication/options', {});
      status(opts, 200);
      const ceremony = json<{ challenge_id: string; options: { challenge: string; rpId: string } }>(opts);
      const response = credential.assert(ceremony.options, PUBLIC_URL, { step: 1 });
      return { passkey: { challenge_id: ceremony.challenge_id, response } };
    }

    async function proof(a: Account, kind: Proof): Promise<Record<string, unknown>> {
      switch (kind) {
        case 'password':
          return { current_password: PASSWORD };
        case 'totp':
          // The confirming step was spent at enrolment: the next one.
          return { code: totpCode(a.secret, 1) };
        case 'recovery code':
          return { code: a.recoveryCodes[0] };
        case 'passkey':
          return passkeyProof(a);
      }
    }

    const mfaStatus = async (a: Account) =>
      json<{ totp: { enabled: boolean }; recovery_codes_remaining: number; passkeys: number }>(
        await a.call('GET', '/api/v1/mfa'),
      );

    it('stolen-token-strips-passkey: DELETE /passkeys/<id> without a proof is 401 reauthentication_required; the passkey and the recovery codes stay', async () => {
      const a = await account();
      // TOTP off first (with a proof), so the passkey is the last factor and would take the codes.
      status(await a.call('DELETE', '/api/v1/mfa/totp', { current_password: PASSWORD }), 204);
      const { recovery_codes } = json<{ recovery_codes: string[] }>(
        await a.call('POST', '/api/v1/mfa/recovery-codes', { current_password: PASSWORD }),
      );
      assert.equal(recovery_codes.length, 10);
      for (const body of [undefined, {}, null]) {
        const res = await t.app.inject({
          method: 'DELETE',
          url: `/api/v1/passkeys/${a.passkeyId}`,
          headers: {
            authorization: `Bearer ${a.token}`,
            ...(body !== undefined && { 'content-type': 'application/json' }),
          },
          ...(body !== undefined && { payload: JSON.stringify(body) }),
        });
        status(res, 401, 'reauthentication_required');
      }
      const after = await mfaStatus(a);
      assert.equal(after.passkeys, 1, 'the passkey is still there');
      assert.equal(after.recovery_codes_remaining, 10, 'and so are the recovery codes');
    });

    it('stolen-token-strips-totp: DELETE /mfa/totp and POST /mfa/recovery-codes without a proof are 401 reauthentication_required', async () => {
      const a = await account();
      status(await a.call('DELETE', '/api/v1/mfa/totp', {}), 401, 'reauthentication_required');
      status(await a.call('DELETE', '/api/v1/mfa/totp'), 401, 'reauthentication_required');
      status(await a.call('POST', '/api/v1/mfa/recovery-codes', {}), 401, 'reauthentication_required');
      status(await a.call('POST', '/api/v1/mfa/recovery-codes'), 401, 'reauthentication_required');
      const after = await mfaStatus(a);
      assert.deepEqual([after.totp.enabled, after.recovery_codes_remaining], [true, 10]);
      // The old set still works: nothing was regenerated.
      status(await a.call('POST', '/api/v1/mfa/recovery-codes', { code: a.recoveryCodes[5] }), 200);
    });

    it('two proofs at once are a 400 (one proof, one attempt)', async () => {
      const a = await account();
      const res = await a.call('DELETE', `/api/v1/passkeys/${a.passkeyId}`, {
        current_password: PASSWORD,
        code: totpCode(a.secret, 1),
      });
      status(res, 400, 'validation_failed');
    });

    for (const kind of PROOFS) {
      it(`DELETE /passkeys/<id> with a ${kind} → 204`, async () => {
        const a = await account();
        status(await a.call('DELETE', `/api/v1/passkeys/${a.passkeyId}`, await proof(a, kind)), 204);
        const after = await mfaStatus(a);
        assert.equal(after.passkeys, 0);
        // TOTP remains, so the recovery codes stay (one went if it was the proof).
        assert.equal(after.recovery_codes_remaining, kind === 'recovery code' ? 9 : 10);
      });

      it(`DELETE /mfa/totp with a ${kind} → 204`, async () => {
        const a = await account();
        status(await a.call('DELETE', '/api/v1/mfa/totp', await proof(a, kind)), 204);
        const after = await mfaStatus(a);
        assert.equal(after.totp.enabled, false);
        assert.equal(after.passkeys, 1, 'the passkey stays, and its recovery codes with it');
      });

      it(`POST /mfa/recovery-codes with a ${kind} → 200, a new set`, async () => {
        const a = await account();
        const res = await a.call('POST', '/api/v1/mfa/recovery-codes', await proof(a, kind));
        status(res, 200);
        const fresh = json<{ recovery_codes: string[] }>(res).recovery_codes;
        assert.equal(fresh.length, 10);
        // The old set died.
        status(await a.call('POST', '/api/v1/mfa/recovery-codes', { code: a.recoveryCodes[1] }), 401);
      });

      it(`POST /email/change with a ${kind} → 202`, async () => {
        const a = await account();
        const res = await a.call('POST', '/api/v1/email/change', {
          new_email: `moved-${a.userId}@example.com`,
          ...(await proof(a, kind)),
        });
        status(res, 202);
      });
    }

    it('an account without a password changes its address with a second factor, and its password proof is refused', async () => {
      const a = await account();
      // The account's password is gone (e.g. created through an identity provider): factors remain.
      await t.ctx.db.updateTable('users').set({ password_hash: null }).where('id', '=', a.userId).execute();
      const body = { new_email: `passwordless-${a.userId}@example.com` };
      status(await a.call('POST', '/api/v1/email/change', body), 401, 'reauthentication_required');
      status(
        await a.call('POST', '/api/v1/email/change', { ...body, current_password: PASSWORD }),
        401,
        'invalid_credentials',
      );
      status(await a.call('POST', '/api/v1/email/change', { ...body, ...(await passkeyProof(a)) }), 202);
    });

    it('wrong proofs: 401 with the proof’s own code, audited as failed logins', async () => {
      const a = await account();
      const url = `/api/v1/passkeys/${a.passkeyId}`;
      status(await a.call('DELETE', url, { current_password: 'not it' }), 401, 'invalid_credentials');
      status(await a.call('DELETE', url, { code: '000000' }), 401, 'mfa_code_invalid');
      status(await a.call('DELETE', url, { code: 'aaaaa-aaaaa' }), 401, 'mfa_code_invalid');
      const bad = await passkeyProof(a);
      bad.passkey.response = { ...bad.passkey.response, id: 'not-a-credential' };
      status(await a.call('DELETE', url, bad), 401, 'passkey_invalid');
      const failures = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'login.failure')
        .where('target_id', '=', a.userId)
        .execute();
      assert.equal(failures.length, 4);
      for (const f of failures) {
        const details = typeof f.details === 'string' ? f.details : JSON.stringify(f.details);
        assert.match(details, /passkey_remove/);
      }
      assert.equal((await mfaStatus(a)).passkeys, 1);
    });

    it('the passkey challenge is bound to the caller and to this purpose, and works once', async () => {
      const a = await account();
      const b = await account();
      // b's challenge signed with a's passkey: refused (bound to b).
      const opts = json<{ challenge_id: string; options: { challenge: string; rpId: string } }>(
        await b.call('POST', '/api/v1/passkeys/authentication/options', {}),
      );
      const foreign = {
        passkey: {
          challenge_id: opts.challenge_id,
          response: a.credential.assert(opts.options, PUBLIC_URL, { step: 1 }),
        },
      };
      status(await a.call('DELETE', '/api/v1/mfa/totp', foreign), 401, 'passkey_invalid');
      // A sign-in challenge (no Bearer) is not a fresh proof.
      const signIn = json<{ challenge_id: string; options: { challenge: string } }>(
        await caller(t)('POST', '/api/v1/passkeys/authentication/options', {}),
      );
      const asSignIn = {
        passkey: {
          challenge_id: signIn.challenge_id,
          response: a.credential.assert({ ...signIn.options, rpId: 'gatehouse.test' }, PUBLIC_URL, {
            step: 1,
          }),
        },
      };
      status(await a.call('DELETE', '/api/v1/mfa/totp', asSignIn), 401, 'passkey_invalid');
      // A fresh-proof challenge does not sign anyone in.
      const own = await passkeyProof(a);
      status(await caller(t)('POST', '/api/v1/login/passkey', own.passkey), 401, 'passkey_invalid');
      // Used once: the same proof again is refused.
      const once = await passkeyProof(a);
      status(await a.call('POST', '/api/v1/mfa/recovery-codes', once), 200);
      status(await a.call('POST', '/api/v1/mfa/recovery-codes', once), 401, 'passkey_invalid');
      // A bad Bearer token on the options is the guard's 401, never the anonymous options.
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/passkeys/authentication/options',
        headers: { authorization: 'Bearer not.a.token' },
        payload: {},
      });
      status(res, 401, 'token_invalid');
    });

    it(`wrong proofs count on the account's login throttle: ${ACCOUNT_FAILURE_LIMIT} refusals, then 429 even for the right proof`, async () => {
      const a = await account();
      const url = `/api/v1/passkeys/${a.passkeyId}`;
      const wrong = [{ current_password: 'not it' }, { code: '000000' }];
      for (let i = 0; i < ACCOUNT_FAILURE_LIMIT; i++) {
        status(await a.call('DELETE', url, wrong[i % 2]), 401);
      }
      status(await a.call('DELETE', url, { current_password: PASSWORD }), 429, 'rate_limited');
      status(
        await a.call('DELETE', '/api/v1/mfa/totp', { code: totpCode(a.secret, 1) }),
        429,
        'rate_limited',
      );
      // The throttle is login's own: a password sign-in from that address is refused too.
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        remoteAddress: a.address,
        payload: { email: a.email, password: PASSWORD },
      });
      status(login, 429, 'rate_limited');
      assert.equal((await mfaStatus(a)).passkeys, 1);
    });

    it('wrong proofs are reserved before they are checked: 10 at once, exactly 5 judged', async () => {
      const a = await account();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          a.call(
            'POST',
            '/api/v1/mfa/recovery-codes',
            i % 2 ? { current_password: 'not it' } : { code: '000000' },
          ),
        ),
      );
      const codes = results.map((r) => r.statusCode);
      assert.equal(codes.filter((c) => c === 401).length, ACCOUNT_FAILURE_LIMIT, String(codes));
      assert.equal(codes.filter((c) => c === 429).length, 10 - ACCOUNT_FAILURE_LIMIT, String(codes));
    });

    it("the admin's reset stays the one exception: no proof, audited", async () => {
      const a = await account();
      const admin = (await sessionFor(t, await firstAdmin(t))).access_token;
      status(await caller(t, admin)('DELETE', `/api/v1/users/${a.userId}/mfa`), 204);
      const reset = await t.ctx.db
        .selectFrom('audit_log')
        .select('id')
        .where('action', '=', 'mfa.reset')
        .where('target_id', '=', a.userId)
        .execute();
      assert.equal(reset.length, 1);
    });
  });
}
