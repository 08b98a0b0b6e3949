import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { createUser } from '../helpers/users.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import {
  auditActions,
  linkIn,
  login,
  nthMailTo,
  post,
  RESET_PREFIX,
  SIGNUP_BODY,
  STRONG_PASSWORD,
  signIn,
  tokenOfLink,
  VERIFY_PREFIX,
} from './helpers.ts';

async function enableRegistration(t: TestApp) {
  const admin = await signIn(t, ADMIN_EMAIL, ADMIN_PASSWORD);
  const res = await t.app.inject({
    method: 'PUT',
    url: '/api/v1/admin/modules/registration',
    headers: { authorization: `Bearer ${admin.access_token}` },
    payload: { enabled: true },
  });
  assert.equal(res.statusCode, 200, res.body);
}

for (const dialect of DIALECTS) {
  describe(`sign-up end to end [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect));
    });
    after(() => t.destroy());

    it('is off in `full` until an operator turns registration on', async () => {
      const res = await post(t, '/api/v1/signup', { email: 'early@example.com', password: STRONG_PASSWORD });
      assert.equal(res.statusCode, 404);
      assert.equal(json(res).code, 'module_disabled');
      await enableRegistration(t);
    });

    it('a new address: 202, an active unverified user, a confirmation link that verifies it', async () => {
      const res = await post(t, '/api/v1/signup', {
        email: 'Newbie@Example.com',
        password: STRONG_PASSWORD,
        name: 'Newbie',
      });
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(json(res), SIGNUP_BODY);
      const user = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', 'newbie@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(user.status, 'active');
      assert.equal(user.role, 'user');
      assert.equal(user.email_verified, 0);
      assert.equal(user.name, 'Newbie');
      const mail = await nthMailTo(smtp, 'newbie@example.com');
      assert.match(mail.subject, /confirm your address/i);
      const token = tokenOfLink(linkIn(mail, VERIFY_PREFIX));
      assert.equal((await post(t, `/api/v1/email/verify/${token}`)).statusCode, 200);
      assert.equal((await login(t, 'newbie@example.com', STRONG_PASSWORD)).statusCode, 200);
      assert.ok((await auditActions(t, user.id)).includes('user.signup'));
    });

    it('a taken address: the same 202, nothing changes, its owner gets a notice with a working recovery link', async () => {
      const owner = await createUser(t, { email: 'taken@example.com', password: STRONG_PASSWORD });
      const res = await post(t, '/api/v1/signup', {
        email: 'taken@example.com',
        password: 'another long passphrase for me',
        name: 'Intruder',
      });
      assert.equal(res.statusCode, 202);
      assert.deepEqual(json(res), SIGNUP_BODY);
      const mail = await nthMailTo(smtp, 'taken@example.com');
      assert.match(mail.subject, /someone tried to sign up with your address/i);
      const token = tokenOfLink(linkIn(mail, RESET_PREFIX));
      assert.equal((await t.app.inject({ url: `/api/v1/password/reset/${token}` })).statusCode, 200);
      const after = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', owner.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(after, owner, 'the account is untouched');
      assert.equal((await login(t, 'taken@example.com', STRONG_PASSWORD)).statusCode, 200);
    });

    it('a weak password is 422 whether or not the address is taken (checked before the address)', async () => {
      for (const email of ['taken@example.com', 'fresh-weak@example.com']) {
        const res = await post(t, '/api/v1/signup', { email, password: 'password' });
        assert.equal(res.statusCode, 422);
        assert.equal(json(res).code, 'weak_password');
      }
    });

    it('10 sign-ups an hour per client address, then 429 before anything else', async () => {
      for (let i = 0; i < 10; i++) {
        const res = await post(
          t,
          '/api/v1/signup',
          { email: `burst${i}@example.com`, password: STRONG_PASSWORD },
          {},
          '192.0.2.77',
        );
        assert.equal(res.statusCode, 202, res.body);
      }
      const over = await post(
        t,
        '/api/v1/signup',
        { email: 'burst10@example.com', password: STRONG_PASSWORD },
        {},
        '192.0.2.77',
      );
      assert.equal(over.statusCode, 429);
      assert.ok(Number(over.headers['retry-after']) > 0);
      const exists = await t.ctx.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'burst10@example.com')
        .executeTakeFirst();
      assert.equal(exists, undefined);
    });
  });

  describe(`REQUIRE_VERIFIED_EMAIL [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect, { REQUIRE_VERIFIED_EMAIL: 'true' }));
      await enableRegistration(t);
    });
    after(() => t.destroy());

    it('the first admin starts verified and signs in', async () => {
      assert.equal((await login(t, ADMIN_EMAIL, ADMIN_PASSWORD)).statusCode, 200);
    });

    it('a correct password of an unverified account: 403 email_not_verified; a wrong one: 401; verified: 200', async () => {
      assert.equal(
        (await post(t, '/api/v1/signup', { email: 'strict@example.com', password: STRONG_PASSWORD }))
          .statusCode,
        202,
      );
      await nthMailTo(smtp, 'strict@example.com');
      const refused = await login(t, 'strict@example.com', STRONG_PASSWORD);
      assert.equal(refused.statusCode, 403);
      assert.equal(json(refused).code, 'email_not_verified');
      assert.equal(
        json(await login(t, 'strict@example.com', 'a wrong password for this one')).code,
        'invalid_credentials',
      );

      // Without a token: email and password ask for a new link (the first one is replaced).
      const wrong = await post(t, '/api/v1/email/verification', {
        email: 'strict@example.com',
        password: 'a wrong password for this one',
      });
      assert.equal(wrong.statusCode, 401);
      assert.equal(json(wrong).code, 'invalid_credentials');
      const stranger = await post(t, '/api/v1/email/verification', {
        email: 'nobody@example.com',
        password: STRONG_PASSWORD,
      });
      assert.equal(stranger.statusCode, 401);
      assert.deepEqual(
        { ...json<Record<string, unknown>>(stranger), request_id: '' },
        { ...json<Record<string, unknown>>(wrong), request_id: '' },
        'unknown and wrong look alike',
      );
      const ask = await post(t, '/api/v1/email/verification', {
        email: 'strict@example.com',
        password: STRONG_PASSWORD,
      });
      assert.equal(ask.statusCode, 202, ask.body);
      const token = tokenOfLink(linkIn(await nthMailTo(smtp, 'strict@example.com', 2), VERIFY_PREFIX));
      assert.equal((await post(t, `/api/v1/email/verify/${token}`)).statusCode, 200);
      assert.equal((await login(t, 'strict@example.com', STRONG_PASSWORD)).statusCode, 200);
    });
  });
}
