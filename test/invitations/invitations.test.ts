import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashOpaqueToken } from '../../src/identity/tokens/opaque-tokens.ts';
import { ADMIN_EMAIL, buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';
import {
  type InviteResponseBody,
  invite,
  mailerHealth,
  outboxRows,
  STRONG_PASSWORD,
  setPassword,
  tokenOf,
  waitUntil,
} from './helpers.ts';

const INVITER_NAME = '<b>Ada & "Bob"</b> <script>alert(1)</script>';

for (const dialect of DIALECTS) {
  describe(`invitations [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    let admin: Record<string, string>;

    before(async () => {
      smtp = await startSmtpServer();
      t = await buildTestApp(dialect, {
        env: { API_FORM: 'B', SMTP_URL: smtp.url, MAIL_FROM: 'Gatehouse <no-reply@gatehouse.test>' },
      });
      const inviter = await createUser(t, {
        role: 'admin',
        name: INVITER_NAME,
        email: 'inviter@example.com',
      });
      admin = await authHeaders(t, inviter);
    });
    after(async () => {
      await t.destroy();
      await smtp.stop();
    });

    /** Invites and waits for the mail; returns the response body and the received mail. */
    async function inviteAndReceive(body: Record<string, unknown>) {
      const seen = smtp.messages.length;
      const res = await invite(t, admin, body);
      assert.equal(res.statusCode, 201, res.body);
      const mail = (await smtp.waitFor(seen + 1))[seen];
      assert.ok(mail);
      return { body: json<InviteResponseBody>(res), mail };
    }

    it('is listed in form B and creates an invited user, an invitation and a mail with the right link', async () => {
      const index = json<{ documentation: Record<string, Record<string, string>> }>(
        await t.app.inject({ url: '/' }),
      );
      assert.equal(index.documentation.auth?.invite, 'GET /api/v1/invite/<token>');
      assert.equal(index.documentation.auth?.invite_set_password, 'POST /api/v1/invite/<token>/set-password');
      assert.equal(index.documentation.users?.invite, 'POST /api/v1/users/invite');

      const { body, mail } = await inviteAndReceive({ email: '  Grace.Hopper@Example.COM ', name: 'Grace' });
      assert.equal(body.invitation.email, 'grace.hopper@example.com');
      assert.equal(body.invitation.role, 'user');
      assert.match(
        body.invitation.invite_url,
        new RegExp(`^${PUBLIC_URL}/account/invitation/[A-Za-z0-9_-]{43}$`),
      );
      assert.equal(body.user.status, 'invited');
      assert.equal(body.user.email_verified, false);
      assert.equal(body.user.name, 'Grace');
      assert.ok(Date.parse(body.invitation.expires_at) > Date.now());

      assert.deepEqual(mail.envelope.to, ['grace.hopper@example.com']);
      assert.ok(mail.text?.includes(body.invitation.invite_url), 'text body has the link');
      assert.ok(mail.html?.includes(`href="${body.invitation.invite_url}"`), 'html body links it');
      assert.ok(mail.text?.includes(INVITER_NAME), 'text body names the inviter as written');
      assert.ok(
        mail.html?.includes(
          '&lt;b&gt;Ada &amp; &quot;Bob&quot;&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;',
        ),
        'html body escapes the inviter name',
      );
      assert.ok(!mail.html?.includes('<script>'), 'no markup from the name reaches the html');
      assert.ok(mail.text?.includes(body.invitation.expires_at), 'the expiry is in the mail');

      // Stored as a hash only; the delivered message's bodies are blanked.
      const token = tokenOf(body);
      // The token is the invitation's one-time link (same id); its own row holds role and inviter.
      const row = await t.ctx.db
        .selectFrom('one_time_links')
        .selectAll()
        .where('id', '=', body.invitation.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.purpose, 'invitation');
      assert.equal(row.token_hash, hashOpaqueToken(token));
      assert.ok(!JSON.stringify(row).includes(token));
      const own = await t.ctx.db
        .selectFrom('invitations')
        .selectAll()
        .where('id', '=', body.invitation.id)
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(own).includes(token));
      const sent = await waitUntil(async () => {
        const rows = await outboxRows(t);
        const last = rows.at(-1);
        return last?.status === 'sent' ? last : null;
      }, 'the outbox row to be marked sent');
      assert.equal(sent.attempts, 1);
      assert.equal(sent.text_body, '');
      assert.equal(sent.html_body, '');
    });

    it('shows an invitation without using it up, then accepts it once', async () => {
      const { body } = await inviteAndReceive({ email: 'linus@example.com', name: 'Linus', role: 'admin' });
      const token = tokenOf(body);
      for (let i = 0; i < 3; i++) {
        const view = await t.app.inject({ url: `/api/v1/invite/${token}` });
        assert.equal(view.statusCode, 200, view.body);
        assert.deepEqual(json(view), {
          email: 'linus@example.com',
          name: 'Linus',
          role: 'admin',
          expires_at: body.invitation.expires_at,
          invited_by: { name: INVITER_NAME },
        });
        assert.equal(view.headers['cache-control'], 'no-store');
      }
      const res = await setPassword(t, token, STRONG_PASSWORD);
      assert.equal(res.statusCode, 200, res.body);
      const tokens = json<{ access_token: string; token_type: string; refresh_token: string; user: never }>(
        res,
      );
      assert.equal(tokens.token_type, 'Bearer');
      assert.deepEqual(
        { ...(tokens.user as Record<string, unknown>), created_at: 0, updated_at: 0 },
        {
          id: body.user.id,
          email: 'linus@example.com',
          name: 'Linus',
          role: 'admin',
          status: 'active',
          email_verified: true,
          created_at: 0,
          updated_at: 0,
          last_login_at: null,
          // API §22: every user object names its kind; an invited person is a person.
          kind: 'person',
          // API §24: users gain `locale`; an invitation without one leaves it null.
          locale: null,
        },
      );
      const verify = await t.app.inject({
        url: '/api/v1/verify-token',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(verify.statusCode, 200);
      const user = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', body.user.id)
        .executeTakeFirstOrThrow();
      assert.ok(user.password_hash && (await t.ctx.passwords.verify(user.password_hash, STRONG_PASSWORD)));

      // Used: both the page and the accept say so.
      const again = await t.app.inject({ url: `/api/v1/invite/${token}` });
      assert.equal(again.statusCode, 410);
      assert.equal(json(again).code, 'invitation_used');
      const twice = await setPassword(t, token, STRONG_PASSWORD);
      assert.equal(twice.statusCode, 410);
      assert.equal(json(twice).code, 'invitation_used');
    });

    it('an invited user cannot log in until the invitation is accepted, then logs in with the password', async () => {
      const { body } = await inviteAndReceive({ email: 'login-later@example.com' });
      const login = () =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/login',
          payload: { email: 'login-later@example.com', password: STRONG_PASSWORD },
        });
      const before = await login();
      assert.equal(before.statusCode, 401);
      assert.equal(json(before).code, 'invalid_credentials');
      assert.equal((await setPassword(t, tokenOf(body), STRONG_PASSWORD)).statusCode, 200);
      assert.equal((await login()).statusCode, 200);
    });

    it('refuses a weak password with 422 and leaves the invitation usable', async () => {
      const { body } = await inviteAndReceive({ email: 'weak@example.com' });
      const token = tokenOf(body);
      for (const weak of ['short', '1qaz2wsx3edc4rfv', 'weak@example.com is my password', 'x'.repeat(257)]) {
        const res = await setPassword(t, token, weak);
        assert.equal(res.statusCode, 422, weak);
        assert.equal(json(res).code, 'weak_password');
      }
      assert.equal((await t.app.inject({ url: `/api/v1/invite/${token}` })).statusCode, 200);
      const user = await t.ctx.db
        .selectFrom('users')
        .select(['status', 'password_hash'])
        .where('id', '=', body.user.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(user, { status: 'invited', password_hash: null });
      assert.equal((await setPassword(t, token, STRONG_PASSWORD)).statusCode, 200);
    });

    it('lets exactly one of two concurrent accepts win', async () => {
      for (let round = 0; round < 3; round++) {
        const { body } = await inviteAndReceive({ email: `race-${round}@example.com` });
        const token = tokenOf(body);
        const results = await Promise.all([
          setPassword(t, token, STRONG_PASSWORD),
          setPassword(t, token, `${STRONG_PASSWORD} and two more`),
        ]);
        const statuses = results.map((r) => r.statusCode).sort();
        assert.deepEqual(statuses, [200, 410], results.map((r) => r.body).join('\n'));
        const loser = results.find((r) => r.statusCode === 410);
        assert.equal(loser && json(loser).code, 'invitation_used');
        const sessions = await t.ctx.db
          .selectFrom('sessions')
          .select('id')
          .where('user_id', '=', body.user.id)
          .execute();
        assert.equal(sessions.length, 1, 'only the winner opened a session');
      }
    });

    it('replaces a pending invitation on re-invite: the old link is dead, the new one works', async () => {
      const first = await inviteAndReceive({ email: 'twice@example.com', name: 'First' });
      const second = await inviteAndReceive({ email: 'TWICE@example.com', name: 'Second', role: 'admin' });
      assert.equal(second.body.user.id, first.body.user.id, 'the invited user is reused');
      assert.equal(second.body.user.name, 'Second');
      assert.equal(second.body.user.role, 'admin');
      assert.notEqual(tokenOf(second.body), tokenOf(first.body));
      assert.ok(second.mail.text?.includes(second.body.invitation.invite_url));

      const oldView = await t.app.inject({ url: `/api/v1/invite/${tokenOf(first.body)}` });
      assert.equal(oldView.statusCode, 410);
      assert.equal(json(oldView).code, 'invitation_used');
      const oldAccept = await setPassword(t, tokenOf(first.body), STRONG_PASSWORD);
      assert.equal(oldAccept.statusCode, 410);
      assert.equal(json(oldAccept).code, 'invitation_used');
      const replaced = await t.ctx.db
        .selectFrom('one_time_links')
        .select('replaced_at')
        .where('id', '=', first.body.invitation.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(replaced.replaced_at, null);

      const accepted = await setPassword(t, tokenOf(second.body), STRONG_PASSWORD);
      assert.equal(accepted.statusCode, 200, accepted.body);
      assert.equal(json<{ user: { role: string } }>(accepted).user.role, 'admin');
    });

    it('concurrent invitations of one address leave one user and exactly one usable invitation', async () => {
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) => invite(t, admin, { email: 'crowd@example.com', name: `N${i}` })),
      );
      for (const r of results) assert.equal(r.statusCode, 201, r.body);
      const bodies = results.map((r) => json<InviteResponseBody>(r));
      assert.equal(new Set(bodies.map((b) => b.user.id)).size, 1);
      const usable = await t.ctx.db
        .selectFrom('one_time_links')
        .select('id')
        .where('purpose', '=', 'invitation')
        .where('email', '=', 'crowd@example.com')
        .where('used_at', 'is', null)
        .where('replaced_at', 'is', null)
        .execute();
      assert.equal(usable.length, 1);
      const accepted = [];
      for (const b of bodies) accepted.push((await setPassword(t, tokenOf(b), STRONG_PASSWORD)).statusCode);
      assert.deepEqual(accepted.filter((s) => s === 200).length, 1, accepted.join(','));
    });

    it('answers 410 invitation_expired once the invitation expired (expires_at in the past)', async () => {
      const { body } = await inviteAndReceive({ email: 'late@example.com' });
      await t.ctx.db
        .updateTable('one_time_links')
        .set({ expires_at: Date.now() - 1 })
        .where('id', '=', body.invitation.id)
        .execute();
      const view = await t.app.inject({ url: `/api/v1/invite/${tokenOf(body)}` });
      assert.equal(view.statusCode, 410);
      assert.equal(json(view).code, 'invitation_expired');
      const accept = await setPassword(t, tokenOf(body), STRONG_PASSWORD);
      assert.equal(accept.statusCode, 410);
      assert.equal(json(accept).code, 'invitation_expired');
      // A fresh invitation of the same address brings it back.
      const again = await inviteAndReceive({ email: 'late@example.com' });
      assert.equal((await setPassword(t, tokenOf(again.body), STRONG_PASSWORD)).statusCode, 200);
    });

    it('expires after INVITATION_TTL_S', async () => {
      const short = await t.restart({ INVITATION_TTL_S: '1' });
      try {
        const headers = await authHeaders(short, await createUser(short, { role: 'admin' }));
        const res = await invite(short, headers, { email: 'ttl@example.com' });
        assert.equal(res.statusCode, 201, res.body);
        const body = json<InviteResponseBody>(res);
        const expiresAt = Date.parse(body.invitation.expires_at);
        assert.ok(expiresAt - Date.now() <= 1000);
        await waitUntil(() => Date.now() > expiresAt + 20, 'the invitation to expire', 5_000);
        const view = await short.app.inject({ url: `/api/v1/invite/${tokenOf(body)}` });
        assert.equal(view.statusCode, 410);
        assert.equal(json(view).code, 'invitation_expired');
      } finally {
        await short.close();
      }
    });

    it('audits the invitation and its acceptance in their transactions; refusals leave no entry', async () => {
      await t.ctx.db.deleteFrom('audit_log').execute();
      const entries = () => t.ctx.db.selectFrom('audit_log').selectAll().orderBy('id').execute();
      const headers = { ...admin, 'user-agent': 'invite-test/1.0' };
      const first = json<InviteResponseBody>(await invite(t, headers, { email: 'audited@example.com' }));
      const res = await invite(t, headers, { email: 'audited@example.com', role: 'admin' });
      assert.equal(res.statusCode, 201);
      const second = json<InviteResponseBody>(res);
      const sent = await entries();
      assert.equal(sent.length, 2);
      const [a, b] = sent;
      assert.ok(a && b);
      assert.equal(b.action, 'invitation.send');
      assert.equal(b.outcome, 'success');
      assert.equal(b.actor_type, 'user');
      assert.equal(b.target_type, 'invitation');
      assert.equal(b.target_id, second.invitation.id);
      assert.equal(b.user_agent, 'invite-test/1.0');
      assert.equal(b.ip, '127.0.0.1');
      assert.deepEqual(JSON.parse(b.details), {
        user_id: second.user.id,
        email: 'audited@example.com',
        role: 'admin',
        replaced: true,
      });
      assert.equal(JSON.parse(a.details).replaced, false);
      assert.ok(!JSON.stringify(sent).includes(tokenOf(first)), 'no token in the audit trail');

      await t.ctx.db.deleteFrom('audit_log').execute();
      assert.equal((await invite(t, admin, { email: ADMIN_EMAIL })).statusCode, 409);
      assert.equal((await setPassword(t, tokenOf(second), 'short')).statusCode, 422);
      assert.equal((await setPassword(t, tokenOf(first), STRONG_PASSWORD)).statusCode, 410);
      assert.deepEqual(await entries(), []);

      const accepted = await t.app.inject({
        method: 'POST',
        url: `/api/v1/invite/${tokenOf(second)}/set-password`,
        headers: { 'user-agent': 'invitee/2.0' },
        payload: { password: STRONG_PASSWORD },
      });
      assert.equal(accepted.statusCode, 200);
      const rows = await entries();
      assert.deepEqual(
        rows.map((r) => [r.action, r.actor_type, r.actor_id, r.target_type, r.target_id, r.user_agent]),
        [['invitation.accept', 'user', second.user.id, 'invitation', second.invitation.id, 'invitee/2.0']],
      );
      assert.deepEqual(JSON.parse(rows[0]?.details ?? '{}'), { user_id: second.user.id });
    });

    it('reports the mailer in /health/detailed', async () => {
      await waitUntil(async () => (await mailerHealth(t)).pending === 0, 'no pending mail');
      const health = await mailerHealth(t);
      assert.equal(health.status, 'ok');
      assert.equal(health.transport, 'smtp');
      assert.equal(health.oldest_pending_age_s, null);
      assert.equal(health.last_error, null);
      assert.ok(!JSON.stringify(health).includes(smtp.url));
    });
  });
}
