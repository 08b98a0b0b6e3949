import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { countFor, idpEnv, problem, signInThroughIdp } from '../helpers/idp.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { createUser } from '../helpers/users.ts';
import {
  linkIn,
  login,
  nthMailTo,
  post,
  STRONG_PASSWORD,
  signIn,
  tokenOfLink,
  VERIFY_PREFIX,
} from '../recovery/helpers.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';

// docs/api.md §16, "Linking by e-mail is safe": an unknown identity links to the account holding its
// verified address only when that account's address is verified or an admin made it, the account
// is not an admin (unless OIDC_LINK_ADMINS), and linking by e-mail is on; else 409
// identity_link_required, and nothing is linked or created.

const ATTACKER_PASSWORD = 'an attacker chose this long passphrase';

interface UserBody {
  user: { id: string; email_verified: boolean };
}

for (const dialect of DIALECTS) {
  describe(`linking by e-mail, round 3 [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;
    let smtp: SmtpHarness;
    let adminAuth: { authorization: string };

    const userRow = (email: string) =>
      t.ctx.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    const sessionCount = async (userId: string) =>
      (await t.ctx.db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute()).length;
    const signup = (email: string, password: string) => post(t, '/api/v1/signup', { email, password });

    before(async () => {
      op = await startOidcProvider();
      ({ t, smtp } = await buildMailTestApp(dialect, idpEnv(op)));
      const admin = await signIn(t, ADMIN_EMAIL, ADMIN_PASSWORD);
      adminAuth = { authorization: `Bearer ${admin.access_token}` };
      const res = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/registration',
        headers: adminAuth,
        payload: { enabled: true },
      });
      assert.equal(res.statusCode, 200, res.body);
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('pre-account-hijack: a self-signed-up, unverified account is not linked (409 identity_link_required), nor verified', async () => {
      // The attacker signs up first with the victim's address and a password of their own.
      assert.equal((await signup('victim@example.com', ATTACKER_PASSWORD)).statusCode, 202);
      const squatted = await userRow('victim@example.com');
      assert.equal(squatted.created_via, 'signup');
      assert.equal((await login(t, 'victim@example.com', ATTACKER_PASSWORD)).statusCode, 200);
      const attackerSessions = await sessionCount(squatted.id);

      // The victim later signs in through the identity provider, which has verified the address.
      op.setAccount('victim', { email: 'victim@example.com', email_verified: true, name: 'Victim' });
      const res = await signInThroughIdp(t, op, 'victim');
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(problem(res).code, 'identity_link_required');
      assert.equal(json(res).access_token, undefined);

      // Nothing linked, nothing created, the address not marked verified, no session for the victim.
      assert.deepEqual(await countFor(t, 'victim@example.com', 'victim'), { users: 1, identities: 0 });
      const after = await userRow('victim@example.com');
      assert.equal(after.email_verified, 0);
      assert.equal(after.password_hash, squatted.password_hash);
      assert.equal(await sessionCount(squatted.id), attackerSessions);
      const refusal = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'login.failure')
        .where('target_id', '=', squatted.id)
        .executeTakeFirstOrThrow();
      assert.equal(JSON.parse(refusal.details).reason, 'identity_link_required');
      assert.equal(JSON.parse(refusal.details).link_refusal, 'address_not_proven');
    });

    it('a self-signed-up account whose address was proven (verification link) links', async () => {
      assert.equal((await signup('proven@example.com', STRONG_PASSWORD)).statusCode, 202);
      const token = tokenOfLink(linkIn(await nthMailTo(smtp, 'proven@example.com'), VERIFY_PREFIX));
      assert.equal((await post(t, `/api/v1/email/verify/${token}`)).statusCode, 200);
      const user = await userRow('proven@example.com');
      assert.equal(user.email_verified, 1);

      op.setAccount('proven', { email: 'proven@example.com', email_verified: true });
      const res = await signInThroughIdp(t, op, 'proven');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json<UserBody>(res).user.id, user.id);
      assert.deepEqual(await countFor(t, 'proven@example.com', 'proven'), { users: 1, identities: 1 });
    });

    it('an admin-created account with an unproven address still links (the operator vouches: form A)', async () => {
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: adminAuth,
        payload: { email: 'managed@example.com', name: 'Managed' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const row = await userRow('managed@example.com');
      assert.equal(row.created_via, 'admin');
      assert.equal(row.email_verified, 0);

      op.setAccount('managed', { email: 'managed@example.com', email_verified: true });
      const res = await signInThroughIdp(t, op, 'managed');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json<UserBody>(res).user.id, row.id);
      assert.equal(json<UserBody>(res).user.email_verified, true, 'the provider proved the address');
    });

    it('admin-account-linked-by-email: an admin account is never linked by e-mail, verified or not', async () => {
      const admin = await createUser(t, { email: 'boss@example.com', role: 'admin' });
      op.setAccount('boss', { email: 'boss@example.com', email_verified: true });
      const res = await signInThroughIdp(t, op, 'boss');
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(problem(res).code, 'identity_link_required');
      assert.deepEqual(await countFor(t, 'boss@example.com', 'boss'), { users: 1, identities: 0 });
      assert.equal(await sessionCount(admin.id), 0);
    });

    it('with OIDC_LINK_ADMINS=true an admin account links by e-mail like any other', async () => {
      const admin = await createUser(t, { email: 'chief@example.com', role: 'admin' });
      op.setAccount('chief', { email: 'chief@example.com', email_verified: true });
      const other = await t.restart({ OIDC_LINK_ADMINS: 'true' });
      try {
        const res = await signInThroughIdp(other, op, 'chief');
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(json<UserBody>(res).user.id, admin.id);
      } finally {
        await other.close();
      }
    });

    it('a disabled self-signed-up account answers 403 before the linking rules; an invited one 403 too', async () => {
      assert.equal((await signup('shut@example.com', STRONG_PASSWORD)).statusCode, 202);
      await t.ctx.db
        .updateTable('users')
        .set({ status: 'disabled' })
        .where('email', '=', 'shut@example.com')
        .execute();
      op.setAccount('shut', { email: 'shut@example.com', email_verified: true });
      const res = await signInThroughIdp(t, op, 'shut');
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(problem(res).code, 'account_disabled');
      assert.deepEqual(await countFor(t, 'shut@example.com', 'shut'), { users: 1, identities: 0 });
    });

    it('an unverified provider address is 401 idp_token_invalid whether or not a sign-up holds it', async () => {
      assert.equal((await signup('loose@example.com', STRONG_PASSWORD)).statusCode, 202);
      op.setAccount('loose', { email: 'loose@example.com', email_verified: false });
      op.setAccount('free', { email: 'free-address@example.com', email_verified: false });
      for (const [account, email] of [
        ['loose', 'loose@example.com'],
        ['free', 'free-address@example.com'],
      ] as const) {
        const res = await signInThroughIdp(t, op, account);
        assert.equal(res.statusCode, 401, res.body);
        assert.equal(problem(res).code, 'idp_token_invalid');
        assert.equal((await countFor(t, email, account)).identities, 0);
      }
    });

    it('with OIDC_LINK_BY_EMAIL=false even a verified account is 409 identity_link_required', async () => {
      const user = await createUser(t, { email: 'nolink@example.com' });
      op.setAccount('nolink', { email: 'nolink@example.com', email_verified: true });
      const other = await t.restart({ OIDC_LINK_BY_EMAIL: 'false' });
      try {
        const res = await signInThroughIdp(other, op, 'nolink');
        assert.equal(res.statusCode, 409, res.body);
        assert.equal(problem(res).code, 'identity_link_required');
        assert.equal(await sessionCount(user.id), 0);
      } finally {
        await other.close();
      }
    });
  });
}
