import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { createUser, sessionFor } from '../helpers/users.ts';
import { PASSWORD } from '../mfa/helpers.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import {
  codeIn,
  mailsTo,
  nextAddress,
  REQUEST_BODY,
  requestSignIn,
  signInMail,
  tokenIn,
  verifyCode,
  verifyToken,
} from './helpers.ts';

/** A code that is not `code` (the mailed one). */
function wrongCode(code: string): string {
  return code === '000000' ? '000001' : '000000';
}

async function pairRow(t: TestApp, email: string) {
  return t.ctx.db
    .selectFrom('one_time_links as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .select(['l.code_tries', 'l.used_at', 'l.replaced_at'])
    .where('u.email', '=', email)
    .where('l.purpose', '=', 'email_signin')
    .orderBy('l.created_at', 'desc')
    .executeTakeFirstOrThrow();
}

for (const dialect of DIALECTS) {
  describe(`sign-in by e-mail: defences [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect));
    });
    after(() => t.destroy());

    it('parallel wrong guesses get exactly 5 tries (reserved first); then the code dies with its link', async () => {
      await createUser(t, { email: 'guess@example.com' });
      await requestSignIn(t, 'guess@example.com');
      const mail = await signInMail(smtp, 'guess@example.com');
      const wrong = wrongCode(codeIn(mail));
      // From 12 client addresses, so the account's per-address login throttle (5) holds none back.
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => verifyCode(t, 'guess@example.com', wrong)),
      );
      for (const res of answers) {
        assert.equal(res.statusCode, 401, res.body);
        assert.equal(json(res).code, 'invalid_credentials');
      }
      const row = await pairRow(t, 'guess@example.com');
      assert.equal(Number(row.code_tries), 5, 'exactly 5 tries were counted');
      assert.notEqual(row.replaced_at, null, 'the pair ended on its fifth wrong try');
      assert.equal(
        (await verifyCode(t, 'guess@example.com', codeIn(mail))).statusCode,
        401,
        'the right code',
      );
      assert.equal((await verifyToken(t, tokenIn(mail))).statusCode, 401, 'the link died with it');
    });

    it("wrong codes count on the account's login throttle, which answers 429 before the code is checked", async () => {
      await createUser(t, { email: 'slow@example.com', password: PASSWORD });
      await requestSignIn(t, 'slow@example.com');
      const mail = await signInMail(smtp, 'slow@example.com');
      const from = nextAddress();
      // Four wrong passwords and one wrong code from one client address: the account's 5.
      for (let i = 0; i < 4; i++) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/login',
          remoteAddress: from,
          payload: { email: 'slow@example.com', password: 'not the password at all!' },
        });
        assert.equal(res.statusCode, 401);
      }
      assert.equal((await verifyCode(t, 'slow@example.com', wrongCode(codeIn(mail)), from)).statusCode, 401);
      const limited = await verifyCode(t, 'slow@example.com', codeIn(mail), from);
      assert.equal(limited.statusCode, 429, limited.body);
      assert.equal(json(limited).code, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After');
      const row = await pairRow(t, 'slow@example.com');
      assert.equal(Number(row.code_tries), 1, 'the throttled attempt never reached the code');
      assert.equal(row.used_at, null, 'the pair is still live');
      // From another address the right code still works (the throttle is per account and address).
      assert.equal((await verifyCode(t, 'slow@example.com', codeIn(mail))).statusCode, 200);
    });

    it('the sign-in mail budget: 5 an hour per address; past it nothing is sent and the live pair stays', async () => {
      await createUser(t, { email: 'many@example.com' });
      for (let i = 0; i < 7; i++) {
        const res = await requestSignIn(t, 'many@example.com');
        assert.equal(res.statusCode, 202);
        assert.deepEqual(json(res), REQUEST_BODY);
      }
      await signInMail(smtp, 'many@example.com', 5);
      await t.ctx.mail.outbox.drain();
      const mails = mailsTo(smtp, 'many@example.com');
      assert.equal(mails.length, 5, 'no sixth or seventh mail');
      // Mails may arrive in any order: the live pair is the one that expires last.
      const expiry = (m: (typeof mails)[number]) => /\((\d{4}-[^)]+Z)\)/.exec(m.text ?? '')?.[1] ?? '';
      const last = [...mails].sort((a, b) => expiry(a).localeCompare(expiry(b))).at(-1);
      assert.ok(last && expiry(last), 'the mails say when they expire');
      const ok = await verifyCode(t, 'many@example.com', codeIn(last));
      assert.equal(ok.statusCode, 200, 'the last mailed pair still works');
    });

    it('the sign-in budget is its own: recovery mails to the address are not spent by it', async () => {
      await createUser(t, { email: 'both@example.com', password: PASSWORD });
      for (let i = 0; i < 5; i++) await requestSignIn(t, 'both@example.com');
      const forgot = await t.app.inject({
        method: 'POST',
        url: '/api/v1/password/forgot',
        remoteAddress: nextAddress(),
        payload: { email: 'both@example.com' },
      });
      assert.equal(forgot.statusCode, 202);
      await t.ctx.mail.outbox.drain();
      const deadline = Date.now() + 8000;
      while (!mailsTo(smtp, 'both@example.com').some((m) => /reset your password/i.test(m.subject ?? ''))) {
        assert.ok(Date.now() < deadline, 'the reset mail went out');
        await new Promise((r) => setTimeout(r, 50));
      }
    });

    it('20 requests an hour per client address, then 429', async () => {
      const from = nextAddress();
      for (let i = 0; i < 20; i++) {
        const res = await requestSignIn(t, `nobody-${i}@example.com`, from);
        assert.equal(res.statusCode, 202, `request ${i + 1}`);
      }
      const over = await requestSignIn(t, 'nobody-21@example.com', from);
      assert.equal(over.statusCode, 429);
      assert.equal(json(over).code, 'rate_limited');
      assert.ok(over.headers['retry-after']);
    });

    it('credential events end a live pair: a global logout and a disable', async () => {
      const user = await createUser(t, { email: 'out@example.com', password: PASSWORD });
      await requestSignIn(t, 'out@example.com');
      const mail = await signInMail(smtp, 'out@example.com');
      const session = await sessionFor(t, user);
      const logout = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: { authorization: `Bearer ${session.access_token}` },
        payload: { scope: 'global' },
      });
      assert.equal(logout.statusCode, 204);
      assert.equal((await verifyCode(t, 'out@example.com', codeIn(mail))).statusCode, 401);
      assert.equal((await verifyToken(t, tokenIn(mail))).statusCode, 401);

      const admin = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('role', '=', 'admin')
        .executeTakeFirstOrThrow();
      const adminSession = await sessionFor(t, admin);
      await requestSignIn(t, 'out@example.com');
      const second = await signInMail(smtp, 'out@example.com', 2);
      const disable = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${user.id}`,
        headers: { authorization: `Bearer ${adminSession.access_token}` },
        payload: { status: 'disabled' },
      });
      assert.equal(disable.statusCode, 200, disable.body);
      const row = await pairRow(t, 'out@example.com');
      assert.notEqual(row.replaced_at, null, 'ended in the disable');
      assert.equal((await verifyToken(t, tokenIn(second))).statusCode, 401);
    });
  });
}
