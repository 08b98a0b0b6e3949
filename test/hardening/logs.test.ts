import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { idpEnv, postVerify } from '../helpers/idp.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';

/*
 * Captures every log line of a full run (trace level, so nothing is filtered out) and checks that
 * no password, token, password hash, private key or Authorization header value appears in any of
 * them. Mail goes through a real SMTP server (with credentials, which must not be logged either):
 * without SMTP_URL the log is the mail transport by design (docs/api.md §8, development only) and
 * carries invitation links. The steps run in order; the last one reads everything the others logged.
 */
for (const dialect of DIALECTS) {
  describe(`logs hold no secrets [${dialect}]`, () => {
    let t: TestApp;
    let op: OidcHarness;
    let smtp: SmtpHarness;
    const smtpPassword = 'smtp secret for logs 5';
    const lines: string[] = [];
    const secrets: string[] = [ADMIN_PASSWORD, smtpPassword];
    let admin = { access_token: '', refresh_token: '' };
    const auth = () => ({ authorization: `Bearer ${admin.access_token}` });
    const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url, payload: body as object, headers });

    before(async () => {
      op = await startOidcProvider();
      smtp = await startSmtpServer({ auth: { user: 'mailer', pass: smtpPassword } });
      t = await buildTestApp(dialect, {
        env: { ...idpEnv(op), SMTP_URL: smtp.url, LOG_LEVEL: 'trace' },
        logLines: lines,
      });
      await t.ctx.modules.set('invitations', true);
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
      await smtp?.stop();
    });

    it('logs in, fails, verifies, refreshes, reuses, changes the password and logs out', async () => {
      admin = json(await post('/api/v1/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }));
      secrets.push(admin.access_token, admin.refresh_token);
      const wrong = 'wrong password, logged?';
      secrets.push(wrong);
      assert.equal((await post('/api/v1/login', { email: ADMIN_EMAIL, password: wrong })).statusCode, 401);
      // A malformed body carrying a password: refused at validation, the value still unlogged.
      const malformed = 'malformed body password 1';
      secrets.push(malformed);
      await post('/api/v1/login', { email: ADMIN_EMAIL, password: malformed, extra: true });
      await t.app.inject({ url: '/api/v1/verify-token', headers: auth() });
      await t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: 'Bearer not.a.token' } });
      const refreshed = json<{ refresh_token: string; access_token: string }>(
        await post('/api/v1/refresh-token', { refresh_token: admin.refresh_token }),
      );
      secrets.push(refreshed.refresh_token, refreshed.access_token);
      const newPassword = 'another sturdy passphrase 99';
      secrets.push(newPassword);
      const changed = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/change-password',
        payload: { current_password: ADMIN_PASSWORD, new_password: newPassword },
        headers: { authorization: `Bearer ${refreshed.access_token}` },
      });
      assert.equal(changed.statusCode, 200, changed.body);
      admin = json(changed);
      secrets.push(admin.access_token, admin.refresh_token);
      // The old refresh token again, after change-password ended its session.
      await post('/api/v1/refresh-token', { refresh_token: refreshed.refresh_token });
      await post('/api/v1/logout', {}, { authorization: `Bearer ${refreshed.access_token}` });
      admin = json(await post('/api/v1/login', { email: ADMIN_EMAIL, password: newPassword }));
      secrets.push(admin.access_token, admin.refresh_token);
    });

    it('signs in through the identity provider, and refuses a replayed or foreign ID token', async () => {
      const { idToken, nonce } = await op.signIn('alice');
      secrets.push(idToken);
      const res = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(res.statusCode, 200, res.body);
      const tokens = json<{ access_token: string; refresh_token: string }>(res);
      secrets.push(tokens.access_token, tokens.refresh_token);
      await postVerify(t, { id_token: idToken, nonce: 'another nonce' });
      await postVerify(t, { id_token: admin.access_token });
    });

    it('creates a user with a password', async () => {
      // Must pass the policy: not containing the email's local part (a first version used logs@…).
      const userPassword = 'a sturdy passphrase for logs 7';
      secrets.push(userPassword);
      const created = await post(
        '/api/v1/users',
        { email: 'recorder@example.com', password: userPassword },
        auth(),
      );
      assert.equal(created.statusCode, 201, created.body);
      const login = await post('/api/v1/login', { email: 'recorder@example.com', password: userPassword });
      assert.equal(login.statusCode, 200, login.body);
      const tokens = json<{ access_token: string; refresh_token: string }>(login);
      secrets.push(tokens.access_token, tokens.refresh_token);
    });

    it('invites a user who sets a password', async () => {
      const invite = json<{ invitation: { invite_url: string } }>(
        await post('/api/v1/users/invite', { email: 'invitee@example.com' }, auth()),
      );
      const inviteToken = invite.invitation.invite_url.split('/').pop() ?? '';
      secrets.push(inviteToken);
      // Delivered (and its delivery logged) before the logs are read.
      const [mail] = await smtp.waitFor(1);
      assert.ok(mail?.text?.includes(inviteToken));
      await t.app.inject({ url: `/api/v1/invite/${inviteToken}` });
      const invitee = 'a newcomer passphrase, long one';
      secrets.push(invitee);
      const set = await post(`/api/v1/invite/${inviteToken}/set-password`, { password: invitee });
      assert.equal(set.statusCode, 200, set.body);
      const tokens = json<{ access_token: string; refresh_token: string }>(set);
      secrets.push(tokens.access_token, tokens.refresh_token);
      // Used once: the second attempt is refused, and logged, without the token.
      await post(`/api/v1/invite/${inviteToken}/set-password`, { password: invitee });
    });

    it('signs in by an e-mailed code, and by an e-mailed link opened on its page (docs/api.md §20)', async () => {
      await t.ctx.modules.set('passwordless', true);
      const mailOf = async (n: number) => {
        const mails = await smtp.waitFor(n);
        const mail = mails.filter((m) => /sign-in link and code/i.test(m.subject)).at(-1);
        const text = mail?.text ?? '';
        return {
          code: /sign-in code is (\d{6})/.exec(text)?.[1] ?? '',
          token: /\/account\/sign-in\/email\/([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? '',
        };
      };
      const before = smtp.messages.length;
      assert.equal((await post('/api/v1/login/email', { email: 'invitee@example.com' })).statusCode, 202);
      const first = await mailOf(before + 1);
      secrets.push(first.token);
      await post('/api/v1/login/email/verify', { email: 'invitee@example.com', code: '000000' });
      const byCode = await post('/api/v1/login/email/verify', {
        email: 'invitee@example.com',
        code: first.code,
      });
      assert.equal(byCode.statusCode, 200, byCode.body);
      const codeTokens = json<{ access_token: string; refresh_token: string }>(byCode);
      secrets.push(codeTokens.access_token, codeTokens.refresh_token);

      assert.equal((await post('/api/v1/login/email', { email: 'invitee@example.com' })).statusCode, 202);
      const second = await mailOf(before + 2);
      secrets.push(second.token);
      const stored = await t.ctx.db
        .selectFrom('one_time_links')
        .select(['token_hash', 'code_hash'])
        .where('purpose', '=', 'email_signin')
        .execute();
      for (const r of stored) secrets.push(r.token_hash, r.code_hash ?? '');
      assert.equal((await t.app.inject({ url: `/account/sign-in/email/${second.token}` })).statusCode, 200);
      const byLink = await post('/api/v1/login/email/verify', { token: second.token });
      assert.equal(byLink.statusCode, 200, byLink.body);
      const linkTokens = json<{ access_token: string; refresh_token: string }>(byLink);
      secrets.push(linkTokens.access_token, linkTokens.refresh_token);
      // Used: refused, and logged, without the token.
      await post('/api/v1/login/email/verify', { token: second.token });
    });

    it('left no credential material in any log line', async () => {
      await post('/api/v1/logout', {}, auth());
      const hashes = await t.ctx.db.selectFrom('users').select('password_hash').execute();
      for (const h of hashes) if (h.password_hash) secrets.push(h.password_hash);
      const keys = await t.ctx.db.selectFrom('signing_keys').select('private_jwk').execute();
      for (const k of keys) secrets.push((JSON.parse(k.private_jwk) as { d: string }).d);
      const stored = await t.ctx.db.selectFrom('refresh_tokens').select('token_hash').execute();
      for (const r of stored) secrets.push(r.token_hash);

      assert.ok(lines.length > 20, `captured ${lines.length} log lines`);
      const all = lines.join('\n');
      for (const secret of secrets) {
        assert.ok(typeof secret === 'string' && secret.length >= 8, 'every step handed out its secrets');
        assert.ok(!all.includes(secret), `a secret appears in the logs: ${secret.slice(0, 6)}…`);
        // JWTs: no part of one either (a logged header or payload alone says who holds a session).
        if (/^[\w-]+\.[\w-]+\.[\w-]+$/.test(secret)) {
          for (const part of secret.split('.').slice(1)) {
            assert.ok(!all.includes(part), `part of a token appears in the logs: ${part.slice(0, 6)}…`);
          }
        }
      }
      assert.doesNotMatch(all, /"authorization":"Bearer/i);
      assert.doesNotMatch(all, /\$argon2id\$/);
    });
  });
}
