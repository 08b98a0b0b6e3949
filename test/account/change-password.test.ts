import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

const CURRENT = 'the current passphrase, long enough';
const NEXT = 'a brand new passphrase for this account';

interface Tokens {
  access_token: string;
  refresh_token: string;
  user: { id: string; updated_at: string };
}

for (const dialect of DIALECTS) {
  describe(`PUT /api/v1/change-password [${dialect}]`, () => {
    let t: TestApp;
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const change = (access: string, payload: Record<string, unknown>, remoteAddress = '10.3.0.1') =>
      t.app.inject({
        method: 'PUT',
        url: '/api/v1/change-password',
        headers: bearer(access),
        payload,
        remoteAddress,
      });
    const verify = (access: string) => t.app.inject({ url: '/api/v1/verify-token', headers: bearer(access) });
    const login = (email: string, password: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email, password },
        remoteAddress: '10.3.9.9',
      });

    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('changes the password, ends every other session (the caller’s old one too) and returns a fresh one', async () => {
      const user = await createUser(t, { password: CURRENT });
      const caller = await sessionFor(t, user);
      const elsewhere = await sessionFor(t, user);
      const res = await change(caller.access_token, { current_password: CURRENT, new_password: NEXT });
      assert.equal(res.statusCode, 200, res.body);
      const fresh = json<Tokens>(res);
      assert.equal(fresh.user.id, user.id);

      for (const old of [caller, elsewhere]) {
        assert.equal(json(await verify(old.access_token)).code, 'session_revoked');
        const r = await t.app.inject({
          method: 'POST',
          url: '/api/v1/refresh-token',
          payload: { refresh_token: old.refresh_token },
        });
        assert.equal(json(r).code, 'refresh_token_invalid');
      }
      assert.equal((await verify(fresh.access_token)).statusCode, 200);

      assert.equal((await login(user.email, CURRENT)).statusCode, 401);
      assert.equal((await login(user.email, NEXT)).statusCode, 200);
      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.match(row.password_hash ?? '', /^\$argon2id\$/);
      assert.ok(row.updated_at > user.updated_at);
    });

    it('refuses a wrong current password with 401 invalid_credentials and changes nothing', async () => {
      const user = await createUser(t, { password: CURRENT });
      const caller = await sessionFor(t, user);
      const res = await change(caller.access_token, {
        current_password: 'not it, not it at all',
        new_password: NEXT,
      });
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'invalid_credentials');
      assert.equal((await verify(caller.access_token)).statusCode, 200, 'the session survives');
      assert.equal((await login(user.email, CURRENT)).statusCode, 200);
    });

    it('refuses a weak new password with 422 weak_password and the reason, before checking anything else', async () => {
      const user = await createUser(t, { email: 'grace.hopper@example.com', password: CURRENT });
      const { access_token } = await sessionFor(t, user);
      const cases: Array<[string, RegExp]> = [
        ['too short', /at least 15 characters/],
        ['1qaz2wsx3edc4rfv', /too common/],
        // Built around the address (docs/api.md §5): without the local part only " 2024! " is left.
        ['grace.hopper 2024! grace.hopper', /email/],
        ['x'.repeat(257), /at most 256/],
      ];
      for (const [password, reason] of cases) {
        const res = await change(access_token, { current_password: CURRENT, new_password: password });
        assert.equal(res.statusCode, 422, password);
        assert.equal(json(res).code, 'weak_password');
        assert.match(String(json(res).detail), reason);
      }
      // The policy is checked before the current password: no hashing for a doomed request.
      const dummies = t.ctx.passwords.stats().dummyVerifications;
      const doomed = await change(access_token, {
        current_password: 'not the current one',
        new_password: 'short',
      });
      assert.equal(doomed.statusCode, 422);
      assert.equal(t.ctx.passwords.stats().dummyVerifications, dummies);
      assert.equal((await verify(access_token)).statusCode, 200);
    });

    it('needs a token and a well-formed body', async () => {
      const anonymous = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/change-password',
        payload: { current_password: CURRENT, new_password: NEXT },
      });
      assert.equal(anonymous.statusCode, 401);
      assert.equal(json(anonymous).code, 'unauthenticated');
      const { access_token } = await sessionFor(t, await createUser(t, { password: CURRENT }));
      const missing = await change(access_token, { new_password: NEXT });
      assert.equal(missing.statusCode, 400);
      const extra = await change(access_token, {
        current_password: CURRENT,
        new_password: NEXT,
        confirm: NEXT,
      });
      assert.equal(extra.statusCode, 400);
    });

    it('puts wrong current passwords under the login throttle', async () => {
      const user = await createUser(t, { password: CURRENT });
      const { access_token } = await sessionFor(t, user);
      for (let i = 0; i < 5; i++) {
        const res = await change(
          access_token,
          { current_password: `wrong guess ${i}`, new_password: NEXT },
          '10.3.1.1',
        );
        assert.equal(res.statusCode, 401);
      }
      const blocked = await change(
        access_token,
        { current_password: CURRENT, new_password: NEXT },
        '10.3.1.1',
      );
      assert.equal(blocked.statusCode, 429);
      assert.ok(Number(blocked.headers['retry-after']) >= 1);
    });

    it('a user without a password cannot pass the current-password check', async () => {
      const user = await createUser(t);
      const { access_token } = await sessionFor(t, user);
      const before = t.ctx.passwords.stats().dummyVerifications;
      const res = await change(access_token, {
        current_password: 'anything at all here',
        new_password: NEXT,
      });
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'invalid_credentials');
      assert.equal(t.ctx.passwords.stats().dummyVerifications, before + 1);
    });
  });
}
