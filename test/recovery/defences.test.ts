import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consumeLinkRow } from '../../src/identity/links/one-time-links.queries.ts';
import { issueLink } from '../../src/identity/links/one-time-links.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { createUser } from '../helpers/users.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import {
  FORGOT_BODY,
  linkIn,
  login,
  mailsTo,
  NEW_PASSWORD,
  nthMailTo,
  pause,
  post,
  RESET_PREFIX,
  STRONG_PASSWORD,
  signIn,
  tokenOfLink,
  VERIFY_PREFIX,
  waitUntil,
} from './helpers.ts';

for (const dialect of DIALECTS) {
  describe(`recovery and e-mail defences [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect));
    });
    after(() => t.destroy());

    it('consume is one conditional write: of 8 concurrent uses of one link exactly one wins', async () => {
      const user = await createUser(t);
      const { link } = await issueLink(t.ctx.db, {
        userId: user.id,
        purpose: 'password_reset',
        email: user.email,
        ttlS: 60,
      });
      const now = Date.now();
      const wins = await Promise.all(
        Array.from({ length: 8 }, () =>
          t.ctx.db.transaction().execute((trx) => consumeLinkRow(trx, link.id, now)),
        ),
      );
      assert.equal(wins.filter(Boolean).length, 1);
    });

    it('five concurrent resets with one link: exactly one 200, the others 410 link_invalid', async () => {
      await createUser(t, { email: 'race@example.com', password: STRONG_PASSWORD });
      await post(t, '/api/v1/password/forgot', { email: 'race@example.com' });
      const token = tokenOfLink(linkIn(await nthMailTo(smtp, 'race@example.com'), RESET_PREFIX));
      const passwords = Array.from({ length: 5 }, (_, i) => `${NEW_PASSWORD} number ${i}`);
      const results = await Promise.all(
        passwords.map((password) => post(t, `/api/v1/password/reset/${token}`, { password })),
      );
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [200, 410, 410, 410, 410]);
      const winner = passwords[results.findIndex((r) => r.statusCode === 200)] ?? '';
      assert.equal((await login(t, 'race@example.com', winner)).statusCode, 200);
    });

    it('three concurrent uses of one change link: exactly one 200', async () => {
      await createUser(t, { email: 'switch@example.com', password: STRONG_PASSWORD });
      const s = await signIn(t, 'switch@example.com', STRONG_PASSWORD);
      await post(
        t,
        '/api/v1/email/change',
        { new_email: 'switched@example.com', current_password: STRONG_PASSWORD },
        { authorization: `Bearer ${s.access_token}` },
      );
      const token = tokenOfLink(linkIn(await nthMailTo(smtp, 'switched@example.com'), VERIFY_PREFIX));
      const results = await Promise.all([0, 1, 2].map(() => post(t, `/api/v1/email/verify/${token}`)));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 410, 410]);
    });

    it('forgot-password answers the same bytes for unknown, active, invited and disabled addresses', async () => {
      await createUser(t, { email: 'same-active@example.com' });
      await createUser(t, { email: 'same-invited@example.com', status: 'invited' });
      await createUser(t, { email: 'same-disabled@example.com', status: 'disabled' });
      const answers = [];
      for (const email of [
        'same-unknown@example.com',
        'same-active@example.com',
        'same-invited@example.com',
        'same-disabled@example.com',
      ]) {
        const res = await post(t, '/api/v1/password/forgot', { email });
        answers.push({ status: res.statusCode, type: res.headers['content-type'], body: res.body });
      }
      for (const a of answers)
        assert.deepEqual(a, {
          status: 202,
          type: 'application/json; charset=utf-8',
          body: JSON.stringify(FORGOT_BODY),
        });
      await nthMailTo(smtp, 'same-active@example.com');
      await pause(1_000);
      assert.equal(mailsTo(smtp, 'same-unknown@example.com').length, 0);
      assert.equal(mailsTo(smtp, 'same-disabled@example.com').length, 0);
    });

    it('20 forgot-password requests an hour per client address, then 429 before the 202', async () => {
      for (let i = 0; i < 20; i++) {
        const res = await post(
          t,
          '/api/v1/password/forgot',
          { email: `nobody${i}@example.com` },
          {},
          '192.0.2.20',
        );
        assert.equal(res.statusCode, 202);
      }
      const over = await post(
        t,
        '/api/v1/password/forgot',
        { email: 'nobody@example.com' },
        {},
        '192.0.2.20',
      );
      assert.equal(over.statusCode, 429);
      assert.equal(json(over).code, 'rate_limited');
      assert.ok(Number(over.headers['retry-after']) > 0);
      assert.equal(
        (await post(t, '/api/v1/password/forgot', { email: 'nobody@example.com' }, {}, '192.0.2.21'))
          .statusCode,
        202,
        'another client is not affected',
      );
    });

    it('3 mails an hour per address, shared by reset and verification: past it still 202, no mail', async () => {
      const user = await createUser(t, { email: 'budget@example.com', password: STRONG_PASSWORD });
      for (let i = 0; i < 4; i++) {
        const res = await post(
          t,
          '/api/v1/password/forgot',
          { email: 'budget@example.com' },
          {},
          `198.51.100.${i + 1}`,
        );
        assert.equal(res.statusCode, 202);
        assert.deepEqual(json(res), FORGOT_BODY);
      }
      await waitUntil(() => mailsTo(smtp, 'budget@example.com').length >= 3, 'three mails');
      await t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', user.id).execute();
      const s = await signIn(t, 'budget@example.com', STRONG_PASSWORD);
      const verification = await post(t, '/api/v1/email/verification', undefined, {
        authorization: `Bearer ${s.access_token}`,
      });
      assert.equal(verification.statusCode, 202);
      await pause(1_500);
      assert.equal(mailsTo(smtp, 'budget@example.com').length, 3);
      const outcomes = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'password.forgot')
        .where('target_id', '=', user.id)
        .execute();
      assert.equal(outcomes.filter((o) => o.details.includes('over_mail_budget')).length, 1);
    });

    it('forgot-password on an invited address re-sends the invitation and the old invitation token dies', async () => {
      const admin = await signIn(t, ADMIN_EMAIL, ADMIN_PASSWORD);
      const invited = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users/invite',
        headers: { authorization: `Bearer ${admin.access_token}` },
        payload: { email: 'guest@example.com' },
      });
      assert.equal(invited.statusCode, 201, invited.body);
      const oldToken = json<{ invitation: { invite_url: string } }>(invited)
        .invitation.invite_url.split('/')
        .pop();
      await nthMailTo(smtp, 'guest@example.com');
      const res = await post(t, '/api/v1/password/forgot', { email: 'guest@example.com' });
      assert.deepEqual(json(res), FORGOT_BODY);
      const resent = await nthMailTo(smtp, 'guest@example.com', 2);
      assert.match(resent.subject, /invited/i);
      const newToken = (resent.text ?? '').match(/\/invit(?:e|ation)\/([A-Za-z0-9_-]{43})/)?.[1];
      assert.ok(newToken && newToken !== oldToken);
      assert.equal(json(await t.app.inject({ url: `/api/v1/invite/${oldToken}` })).code, 'invitation_used');
      assert.equal((await t.app.inject({ url: `/api/v1/invite/${newToken}` })).statusCode, 200);
    });

    it('a reset clears the failed-login counts that locked the account out, from every client address', async () => {
      await createUser(t, { email: 'locked@example.com', password: STRONG_PASSWORD });
      for (const address of ['127.0.0.1', '192.0.2.99']) {
        for (let i = 0; i < 5; i++)
          await login(t, 'locked@example.com', 'a wrong guess at the password', address);
        assert.equal((await login(t, 'locked@example.com', STRONG_PASSWORD, address)).statusCode, 429);
      }
      await post(t, '/api/v1/password/forgot', { email: 'locked@example.com' });
      const token = tokenOfLink(linkIn(await nthMailTo(smtp, 'locked@example.com'), RESET_PREFIX));
      assert.equal(
        (await post(t, `/api/v1/password/reset/${token}`, { password: NEW_PASSWORD })).statusCode,
        200,
      );
      for (const address of ['127.0.0.1', '192.0.2.99']) {
        assert.equal((await login(t, 'locked@example.com', NEW_PASSWORD, address)).statusCode, 200, address);
      }
    });

    it('a link dies when the account is disabled or its address changes after it was sent', async () => {
      const user = await createUser(t, { email: 'stale@example.com', password: STRONG_PASSWORD });
      await post(t, '/api/v1/password/forgot', { email: 'stale@example.com' });
      const token = tokenOfLink(linkIn(await nthMailTo(smtp, 'stale@example.com'), RESET_PREFIX));
      await t.ctx.db
        .updateTable('users')
        .set({ email: 'moved@example.com' })
        .where('id', '=', user.id)
        .execute();
      assert.equal(json(await t.app.inject({ url: `/api/v1/password/reset/${token}` })).code, 'link_invalid');
      await t.ctx.db
        .updateTable('users')
        .set({ email: 'stale@example.com', status: 'disabled' })
        .where('id', '=', user.id)
        .execute();
      assert.equal(
        json(await post(t, `/api/v1/password/reset/${token}`, { password: NEW_PASSWORD })).code,
        'link_invalid',
      );
    });

    it('gatehouse users reset-link --email prints a working link and mails nothing', async () => {
      await createUser(t, { email: 'operator@example.com', password: STRONG_PASSWORD });
      const env = { PUBLIC_URL, ADMIN_EMAIL, ADMIN_PASSWORD };
      const out = await runCli(
        ['users', 'reset-link', '--email', 'Operator@example.com'],
        t.databaseUrl,
        env,
      );
      assert.equal(out.code, 0, out.stderr);
      const link = out.stdout.trim();
      assert.ok(link.startsWith(RESET_PREFIX), link);
      assert.equal(
        (await t.app.inject({ url: `/api/v1/password/reset/${tokenOfLink(link)}` })).statusCode,
        200,
      );
      const missing = await runCli(
        ['users', 'reset-link', '--email', 'ghost@example.com'],
        t.databaseUrl,
        env,
      );
      assert.notEqual(missing.code, 0);
      assert.equal(missing.stderr.trim().split('\n').length, 1, missing.stderr);
      await pause(500);
      assert.equal(mailsTo(smtp, 'operator@example.com').length, 0);
    });
  });
}
