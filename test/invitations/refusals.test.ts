import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_EMAIL, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';
import { type InviteResponseBody, invite, STRONG_PASSWORD, setPassword, tokenOf } from './helpers.ts';

for (const dialect of DIALECTS) {
  describe(`invitation refusals [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    let admin: Record<string, string>;

    before(async () => {
      smtp = await startSmtpServer();
      t = await buildTestApp(dialect, { env: { API_FORM: 'B', SMTP_URL: smtp.url } });
      admin = await authHeaders(
        t,
        await createUser(t, { role: 'admin', name: 'Inviter', email: 'inviter@example.com' }),
      );
    });
    after(async () => {
      await t.destroy();
      await smtp.stop();
    });

    /** Invites (the mail goes out in the background). */
    async function inviteOk(body: Record<string, unknown>) {
      const res = await invite(t, admin, body);
      assert.equal(res.statusCode, 201, res.body);
      return { body: json<InviteResponseBody>(res) };
    }

    it('refuses to invite an existing active or disabled user (409 email_taken)', async () => {
      await createUser(t, { email: 'disabled@example.com', status: 'disabled' });
      for (const email of [ADMIN_EMAIL.toUpperCase(), 'inviter@example.com', 'disabled@example.com']) {
        const res = await invite(t, admin, { email });
        assert.equal(res.statusCode, 409, email);
        assert.equal(json(res).code, 'email_taken');
      }
    });

    it('answers 404 invitation_not_found for unknown and malformed tokens', async () => {
      for (const token of ['A'.repeat(43), 'garbage', 'a'.repeat(500), '%00%2F..']) {
        const view = await t.app.inject({ url: `/api/v1/invite/${token}` });
        assert.equal(view.statusCode, 404, token);
        assert.equal(json(view).code, 'invitation_not_found');
        const accept = await setPassword(t, token, STRONG_PASSWORD);
        assert.equal(accept.statusCode, 404, token);
        assert.equal(json(accept).code, 'invitation_not_found');
      }
    });

    it('answers a token beyond the router parameter limit as problem+json 404 (was Fastify 414 JSON)', async () => {
      const res = await t.app.inject({ url: `/api/v1/invite/${'x'.repeat(600)}` });
      assert.equal(res.statusCode, 404);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      assert.ok(res.headers['x-request-id']);
    });

    it('an invitation of a user disabled meanwhile is no longer usable', async () => {
      const { body } = await inviteOk({ email: 'blocked@example.com' });
      await t.ctx.db
        .updateTable('users')
        .set({ status: 'disabled' })
        .where('id', '=', body.user.id)
        .execute();
      const accept = await setPassword(t, tokenOf(body), STRONG_PASSWORD);
      assert.equal(accept.statusCode, 410);
      assert.equal(json(accept).code, 'invitation_used');
      const user = await t.ctx.db
        .selectFrom('users')
        .select('status')
        .where('id', '=', body.user.id)
        .executeTakeFirstOrThrow();
      assert.equal(user.status, 'disabled');
    });

    it('is admin-only and validates its body', async () => {
      const unauth = await invite(t, {}, { email: 'x@example.com' });
      assert.equal(unauth.statusCode, 401);
      const user = await createUser(t, { email: 'plain@example.com' });
      const forbidden = await invite(t, await authHeaders(t, user), { email: 'x@example.com' });
      assert.equal(forbidden.statusCode, 403);
      assert.equal(json(forbidden).code, 'forbidden');
      for (const payload of [
        { email: 'not-an-email' },
        { email: 'x@example.com', role: 'root' },
        { email: 'x@example.com', extra: 1 },
        {},
      ]) {
        const res = await invite(t, admin, payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(json(res).code, 'validation_failed');
      }
      const unknownField = await t.app.inject({
        method: 'POST',
        url: `/api/v1/invite/${'A'.repeat(43)}/set-password`,
        payload: { password: STRONG_PASSWORD, role: 'admin' },
      });
      assert.equal(unknownField.statusCode, 400);
    });

    it('answers 404 module_disabled when the module is off, and works again when on', async () => {
      await t.ctx.modules.set('invitations', false);
      try {
        const res = await invite(t, admin, { email: 'off@example.com' });
        assert.equal(res.statusCode, 404);
        assert.equal(json(res).code, 'module_disabled');
        assert.equal((await t.app.inject({ url: `/api/v1/invite/${'A'.repeat(43)}` })).statusCode, 404);
        const index = json<{ documentation: Record<string, Record<string, string>> }>(
          await t.app.inject({ url: '/' }),
        );
        assert.equal(index.documentation.users?.invite, undefined);
      } finally {
        await t.ctx.modules.set('invitations', true);
      }
      assert.equal((await invite(t, admin, { email: 'on@example.com' })).statusCode, 201);
    });
  });
}
