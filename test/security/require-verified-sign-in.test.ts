import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { idpEnv, signInThroughIdp } from '../helpers/idp.ts';
import { caller, registerPasskey, userWithSession } from '../mfa/helpers.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';
import type { SoftCredential } from '../support/webauthn-authenticator.ts';

/*
 * docs/api.md §16, `REQUIRE_VERIFIED_EMAIL`: passkey sign-in refuses an unverified account with 403
 * `email_not_verified`, as the password login does (§12); a sign-in through an identity provider
 * that asserts `email_verified: true` for the account's own address verifies it in the same
 * transaction and proceeds, and one that does not is refused like the password.
 */

interface Ceremony {
  challenge_id: string;
  options: { challenge: string };
}

for (const dialect of DIALECTS) {
  describe(`REQUIRE_VERIFIED_EMAIL: passkey and identity-provider sign-in [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;

    before(async () => {
      op = await startOidcProvider();
      t = await buildTestApp(dialect, {
        env: { API_FORM: 'full', REQUIRE_VERIFIED_EMAIL: 'true', ...idpEnv(op) },
      });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    const setVerified = (id: string, verified: 0 | 1) =>
      t.ctx.db.updateTable('users').set({ email_verified: verified }).where('id', '=', id).execute();
    const userRow = (id: string) =>
      t.ctx.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const liveSessions = async (userId: string) =>
      (await t.ctx.db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute()).length;

    async function passkeyLogin(app: TestApp, credential: SoftCredential) {
      const opts = await caller(app)('POST', '/api/v1/passkeys/authentication/options', {});
      assert.equal(opts.statusCode, 200, opts.body);
      const ceremony = json<Ceremony>(opts);
      const response = credential.assert(
        { challenge: ceremony.options.challenge, rpId: 'gatehouse.test' },
        PUBLIC_URL,
        {
          step: 1,
        },
      );
      return caller(app)('POST', '/api/v1/login/passkey', { challenge_id: ceremony.challenge_id, response });
    }

    it('passkey-sign-in-skips-verified-email: an unverified account with a good passkey gets 403 email_not_verified, no session', async () => {
      const { user, token } = await userWithSession(t, 'pia@example.com');
      const { credential } = await registerPasskey(t, token);
      await setVerified(user.id, 0);
      const before = await liveSessions(user.id);

      const refused = await passkeyLogin(t, credential);
      assert.equal(refused.statusCode, 403, refused.body);
      assert.equal(json(refused).code, 'email_not_verified');
      assert.equal(await liveSessions(user.id), before, 'no session was opened');
      const entry = await t.ctx.db
        .selectFrom('audit_log')
        .select(['action', 'details'])
        .where('target_id', '=', user.id)
        .where('action', '=', 'login.failure')
        .executeTakeFirstOrThrow();
      assert.match(String(entry.details), /"reason":"email_not_verified"/);

      // Once the address is proven the same passkey signs in.
      await setVerified(user.id, 1);
      const ok = await passkeyLogin(t, credential);
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('passkey sign-in of an unverified account proceeds while REQUIRE_VERIFIED_EMAIL is off', async () => {
      const { user, token } = await userWithSession(t, 'pete@example.com');
      const { credential } = await registerPasskey(t, token);
      await setVerified(user.id, 0);
      const off = await t.restart({ REQUIRE_VERIFIED_EMAIL: 'false' });
      try {
        const res = await passkeyLogin(off, credential);
        assert.equal(res.statusCode, 200, res.body);
      } finally {
        await off.close();
      }
    });

    /** A user made by a first provider sign-in (`sub`), then made unverified (e.g. an admin changed the address). */
    async function linkedUnverified(sub: string): Promise<UserRow> {
      op.setAccount(sub, { email: `${sub}@example.com`, email_verified: true, name: sub });
      const first = await signInThroughIdp(t, op, sub);
      assert.equal(first.statusCode, 200, first.body);
      const id = json<{ user: { id: string } }>(first).user.id;
      await setVerified(id, 0);
      return userRow(id);
    }

    it('a provider that asserts email_verified for the account address verifies it in the sign-in, which proceeds (200)', async () => {
      const user = await linkedUnverified('ivy');
      const res = await signInThroughIdp(t, op, 'ivy');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json<{ user: { email_verified: boolean } }>(res).user.email_verified, true);
      assert.equal((await userRow(user.id)).email_verified, 1);
    });

    it('idp-sign-in-skips-verified-email: a provider that does not vouch for the account address gets 403 email_not_verified', async () => {
      const user = await linkedUnverified('ida');
      for (const claims of [
        { email: 'ida@example.com', email_verified: false },
        { email: 'ida-elsewhere@example.com', email_verified: true },
      ]) {
        op.setAccount('ida', { ...claims, name: 'Ida' });
        const res = await signInThroughIdp(t, op, 'ida');
        assert.equal(res.statusCode, 403, res.body);
        assert.equal(json(res).code, 'email_not_verified');
      }
      const row = await userRow(user.id);
      assert.equal(row.email_verified, 0, 'nothing was verified');
      assert.equal(row.email, 'ida@example.com');
      assert.equal(await liveSessions(user.id), 1, 'only the first sign-in opened a session');
    });
  });
}
