import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { claimsOf, enableTotp, loginMfa, PASSWORD, totpCode } from '../mfa/helpers.ts';

import type { SmtpHarness } from '../support/smtp-server.ts';
import {
  codeIn,
  mailsTo,
  nextAddress,
  problemShape,
  REQUEST_BODY,
  requestSignIn,
  signInMail,
  tokenIn,
  verifyCode,
  verifyToken,
} from './helpers.ts';

async function linkRows(t: TestApp, userId: string) {
  return t.ctx.db
    .selectFrom('one_time_links')
    .selectAll()
    .where('user_id', '=', userId)
    .where('purpose', '=', 'email_signin')
    .orderBy('created_at')
    .execute();
}

for (const dialect of DIALECTS) {
  describe(`sign-in by e-mail link and code [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect, { APP_NAME: 'Acme ID' }));
    });
    after(() => t.destroy());

    it('request → one mail with a link and a code; the code signs in (amr otp, mailbox proven) and kills the link', async () => {
      const user = await createUser(t, { email: 'ada@example.com' });
      await t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', user.id).execute();
      const res = await requestSignIn(t, 'Ada@Example.com');
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(json(res), REQUEST_BODY);
      const mail = await signInMail(smtp, 'ada@example.com');
      assert.match(mail.subject, /sign-in link and code/i);
      assert.match(mail.subject, /Acme ID/);
      const code = codeIn(mail);
      const token = tokenIn(mail);
      assert.ok(Buffer.from(token, 'base64url').length >= 32, 'a 256-bit link token');

      const [row] = await linkRows(t, user.id);
      assert.ok(row);
      assert.notEqual(row.token_hash, token, 'the link is kept as a hash');
      assert.ok(row.code_hash && !row.code_hash.includes(code), 'the code is kept as an HMAC');
      assert.equal(row.expires_at - row.created_at, 600_000, 'EMAIL_SIGNIN_TTL_S defaults to 10 minutes');

      const ok = await verifyCode(t, 'ada@example.com', code);
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.headers['cache-control'], 'no-store');
      const tokens = json<{ access_token: string; user: { email_verified: boolean } }>(ok);
      assert.equal(tokens.user.email_verified, true, 'success proves the mailbox');
      assert.deepEqual(claimsOf(tokens.access_token).amr, ['otp']);
      const verified = await t.ctx.db
        .selectFrom('users')
        .select('email_verified')
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(verified.email_verified), 1);

      // Using one half kills both; the code is single use too.
      const again = await verifyCode(t, 'ada@example.com', code);
      assert.equal(again.statusCode, 401);
      assert.equal(json(again).code, 'invalid_credentials');
      const link = await verifyToken(t, token);
      assert.equal(link.statusCode, 401);
      assert.equal(json(link).code, 'invalid_credentials');
    });

    it('the link signs in once and kills the code', async () => {
      await createUser(t, { email: 'bob@example.com' });
      await requestSignIn(t, 'bob@example.com');
      const mail = await signInMail(smtp, 'bob@example.com');
      const ok = await verifyToken(t, tokenIn(mail));
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(claimsOf(json<{ access_token: string }>(ok).access_token).amr, ['otp']);
      assert.equal((await verifyToken(t, tokenIn(mail))).statusCode, 401, 'a used link');
      assert.equal((await verifyCode(t, 'bob@example.com', codeIn(mail))).statusCode, 401, 'its code died');
    });

    it('a new request replaces the live pair: the old code and link stop working, the new ones work', async () => {
      await createUser(t, { email: 'cy@example.com' });
      await requestSignIn(t, 'cy@example.com');
      const first = await signInMail(smtp, 'cy@example.com', 1);
      await requestSignIn(t, 'cy@example.com');
      const second = await signInMail(smtp, 'cy@example.com', 2);
      const oldCode = codeIn(first);
      const newCode = codeIn(second);
      if (oldCode !== newCode) {
        assert.equal((await verifyCode(t, 'cy@example.com', oldCode)).statusCode, 401, 'the old code');
      }
      assert.equal((await verifyToken(t, tokenIn(first))).statusCode, 401, 'the old link');
      const ok = await verifyCode(t, 'cy@example.com', newCode);
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('an expired pair answers 401 invalid_credentials for both halves', async () => {
      const user = await createUser(t, { email: 'dee@example.com' });
      await requestSignIn(t, 'dee@example.com');
      const mail = await signInMail(smtp, 'dee@example.com');
      await t.ctx.db
        .updateTable('one_time_links')
        .set({ expires_at: 1 })
        .where('user_id', '=', user.id)
        .execute();
      assert.equal((await verifyCode(t, 'dee@example.com', codeIn(mail))).statusCode, 401);
      assert.equal((await verifyToken(t, tokenIn(mail))).statusCode, 401);
    });

    it('a second factor is asked the way POST /login asks it; the sign-in completes with amr otp+mfa', async () => {
      const user = await createUser(t, { email: 'eve@example.com', password: PASSWORD });
      const { secret } = await enableTotp(t, (await authHeaders(t, user)).authorization.slice(7));
      await requestSignIn(t, 'eve@example.com');
      const mail = await signInMail(smtp, 'eve@example.com');
      const res = await verifyToken(t, tokenIn(mail));
      assert.equal(res.statusCode, 403, res.body);
      const body = json<{ code: string; mfa_token: string; methods: string[] }>(res);
      assert.equal(body.code, 'mfa_required');
      assert.ok(body.methods.includes('totp'));
      assert.equal(
        (await verifyCode(t, 'eve@example.com', codeIn(mail))).statusCode,
        401,
        'the pair is used',
      );
      // The confirmation spent this step's code (replay guard): the next step's is accepted too.
      const done = await loginMfa(t, body.mfa_token, totpCode(secret, 1));
      assert.equal(done.statusCode, 200, done.body);
      assert.deepEqual(claimsOf(json<{ access_token: string }>(done).access_token).amr, ['otp', 'mfa']);
    });

    it('REQUIRE_VERIFIED_EMAIL: an unverified account signs in by code, and is verified by it', async () => {
      const strict = await t.restart({ REQUIRE_VERIFIED_EMAIL: 'true' });
      try {
        const user = await createUser(strict, { email: 'fay@example.com' });
        await strict.ctx.db
          .updateTable('users')
          .set({ email_verified: 0 })
          .where('id', '=', user.id)
          .execute();
        await requestSignIn(strict, 'fay@example.com');
        const mail = await signInMail(smtp, 'fay@example.com');
        const ok = await verifyCode(strict, 'fay@example.com', codeIn(mail));
        assert.equal(ok.statusCode, 200, ok.body);
        assert.equal(json<{ user: { email_verified: boolean } }>(ok).user.email_verified, true);
      } finally {
        await strict.close();
      }
    });

    it('no enumeration: unknown, disabled and invited addresses get the same 202 and no mail; their verify is the same 401', async () => {
      await createUser(t, { email: 'gone@example.com', status: 'disabled' });
      await createUser(t, { email: 'soon@example.com', status: 'invited' });
      await createUser(t, { email: 'here@example.com' });
      const answers = [];
      for (const email of [
        'nobody@example.com',
        'gone@example.com',
        'soon@example.com',
        'here@example.com',
      ]) {
        const res = await requestSignIn(t, email);
        answers.push({ status: res.statusCode, body: json(res) });
      }
      for (const a of answers) assert.deepEqual(a, { status: 202, body: REQUEST_BODY });
      await signInMail(smtp, 'here@example.com');
      await t.ctx.mail.outbox.drain();
      for (const email of ['nobody@example.com', 'gone@example.com', 'soon@example.com']) {
        assert.equal(mailsTo(smtp, email).length, 0, `no mail to ${email}`);
      }
      const shapes = [];
      for (const email of [
        'nobody@example.com',
        'gone@example.com',
        'soon@example.com',
        'here@example.com',
      ]) {
        shapes.push(problemShape(await verifyCode(t, email, '123456')));
      }
      shapes.push(problemShape(await verifyToken(t, 'A'.repeat(43))));
      for (const s of shapes) assert.deepEqual(s, shapes[0]);
      assert.equal(shapes[0]?.status, 401);
      assert.equal(shapes[0]?.code, 'invalid_credentials');
    });

    it('malformed input is 400 validation_failed', async () => {
      for (const payload of [{ email: 'not an address' }, { email: 'a@example.com', extra: 1 }, {}]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/login/email',
          remoteAddress: nextAddress(),
          payload,
        });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(json(res).code, 'validation_failed');
      }
      for (const payload of [
        { email: 'a@example.com' },
        { token: 'x', code: '123456' },
        { email: 'nope', code: '1' },
      ]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/login/email/verify',
          remoteAddress: nextAddress(),
          payload,
        });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(json(res).code, 'validation_failed');
      }
    });
  });
}
