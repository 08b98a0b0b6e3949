import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { type InviteResponseBody, invite, setPassword, tokenOf } from '../invitations/helpers.ts';
import { linkIn, nthMailTo, post, RESET_PREFIX, signIn, tokenOfLink } from '../recovery/helpers.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import { BREACHED_ONLY, STRONG_RANDOM } from './breached-support.ts';

const [BREACHED = '', BREACHED_TOO = ''] = BREACHED_ONLY;
const REASON = /exposed in data breaches/;

/** 422 weak_password with the breached list's reason, the password not echoed. */
function assertBreached(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 422, res.body);
  const body = json<{ code: string; detail: string }>(res);
  assert.equal(body.code, 'weak_password');
  assert.match(body.detail, REASON);
  assert.ok(!res.body.includes(BREACHED) && !res.body.includes(BREACHED_TOO), 'the password is not echoed');
}

/*
 * breached-list-unchecked: new passwords were checked against the 49,233 common passwords only; the
 * breached million (docs/security.md, "Breached passwords") is now checked wherever a password is
 * set: sign-up, change, reset, admin-set and invitation acceptance, unless PASSWORD_BREACHED_CHECK=off.
 * The passwords used are in the breached list and not in the common one.
 */
for (const dialect of DIALECTS) {
  describe(`breached passwords refused wherever a password is set [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    let admin: Record<string, string>;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect));
      admin = await authHeaders(t, await firstAdmin(t));
      const on = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/registration',
        headers: admin,
        payload: { enabled: true },
      });
      assert.equal(on.statusCode, 200, on.body);
    });
    after(() => t.destroy());

    it('sign-up: a breached password is 422 and creates no account; a strong random one is 202', async () => {
      assertBreached(await post(t, '/api/v1/signup', { email: 'signup@example.com', password: BREACHED }));
      const none = await t.ctx.db.selectFrom('users').select('id').where('email', '=', 'signup@example.com');
      assert.equal((await none.execute()).length, 0);
      const ok = await post(t, '/api/v1/signup', { email: 'signup@example.com', password: STRONG_RANDOM });
      assert.equal(ok.statusCode, 202, ok.body);
    });

    it('change-password: a breached new password is 422 and the old one still works', async () => {
      const user = await createUser(t, { email: 'change@example.com', password: STRONG_RANDOM });
      const { access_token } = await signIn(t, user.email, STRONG_RANDOM);
      const change = (new_password: string) =>
        t.app.inject({
          method: 'PUT',
          url: '/api/v1/change-password',
          headers: { authorization: `Bearer ${access_token}` },
          payload: { current_password: STRONG_RANDOM, new_password },
        });
      assertBreached(await change(BREACHED_TOO));
      await signIn(t, user.email, STRONG_RANDOM);
      const ok = await change(`${STRONG_RANDOM}-next`);
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('reset: a breached password is 422 and the link stays usable for a strong one', async () => {
      await createUser(t, { email: 'reset@example.com', password: STRONG_RANDOM });
      assert.equal(
        (await post(t, '/api/v1/password/forgot', { email: 'reset@example.com' })).statusCode,
        202,
      );
      const token = tokenOfLink(linkIn(await nthMailTo(smtp, 'reset@example.com'), RESET_PREFIX));
      assertBreached(await post(t, `/api/v1/password/reset/${token}`, { password: BREACHED }));
      const ok = await post(t, `/api/v1/password/reset/${token}`, { password: `${STRONG_RANDOM}-reset` });
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('admin-set: creating or updating a user with a breached password is 422', async () => {
      const create = (password: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/users',
          headers: admin,
          payload: { email: 'admin-set@example.com', password },
        });
      assertBreached(await create(BREACHED));
      const created = await create(STRONG_RANDOM);
      assert.equal(created.statusCode, 201, created.body);
      const id = json<{ id: string }>(created).id;
      const update = (password: string) =>
        t.app.inject({ method: 'PUT', url: `/api/v1/users/${id}`, headers: admin, payload: { password } });
      assertBreached(await update(BREACHED_TOO));
      assert.equal((await update(`${STRONG_RANDOM}-admin`)).statusCode, 200);
    });

    it('invitation acceptance: a breached password is 422 and the invitation stays usable', async () => {
      const res = await invite(t, admin, { email: 'invited@example.com' });
      assert.equal(res.statusCode, 201, res.body);
      const token = tokenOf(json<InviteResponseBody>(res));
      assertBreached(await setPassword(t, token, BREACHED));
      assert.equal((await setPassword(t, token, STRONG_RANDOM)).statusCode, 200);
    });

    it('PASSWORD_BREACHED_CHECK=off: the breached password is accepted, the common list still applies', async () => {
      const off = await t.restart({ PASSWORD_BREACHED_CHECK: 'off' });
      try {
        const headers = await authHeaders(off, await firstAdmin(off));
        const create = (email: string, password: string) =>
          off.app.inject({ method: 'POST', url: '/api/v1/users', headers, payload: { email, password } });
        assert.equal((await create('off@example.com', BREACHED)).statusCode, 201);
        const common = await create('common@example.com', '1qaz2wsx3edc4rfv');
        assert.equal(common.statusCode, 422);
        assert.match(json<{ detail: string }>(common).detail, /frequently used passwords/);
      } finally {
        await off.close();
      }
    });
  });
}
