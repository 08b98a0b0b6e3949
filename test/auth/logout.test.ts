import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

for (const dialect of DIALECTS) {
  describe(`POST /api/v1/logout [${dialect}]`, () => {
    let t: TestApp;
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const verify = (access: string) => t.app.inject({ url: '/api/v1/verify-token', headers: bearer(access) });
    const refresh = (token: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/refresh-token', payload: { refresh_token: token } });

    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('without a body ends only the caller’s session, at once', async () => {
      const user = await createUser(t);
      const one = await sessionFor(t, user);
      const two = await sessionFor(t, user);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: bearer(one.access_token),
      });
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');

      const dead = await verify(one.access_token);
      assert.equal(dead.statusCode, 401);
      assert.equal(json(dead).code, 'session_revoked');
      assert.match(String(dead.headers['www-authenticate']), /error="invalid_token"/);
      assert.equal(json(await refresh(one.refresh_token)).code, 'refresh_token_invalid');

      assert.equal((await verify(two.access_token)).statusCode, 200);
      assert.equal((await refresh(two.refresh_token)).statusCode, 200);
    });

    it('with {"scope":"local"} does the same', async () => {
      const user = await createUser(t);
      const one = await sessionFor(t, user);
      const two = await sessionFor(t, user);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: bearer(one.access_token),
        payload: { scope: 'local' },
      });
      assert.equal(res.statusCode, 204);
      assert.equal((await verify(one.access_token)).statusCode, 401);
      assert.equal((await verify(two.access_token)).statusCode, 200);
    });

    it('with {"scope":"global"} ends every session of the user and no one else’s', async () => {
      const user = await createUser(t);
      const other = await sessionFor(t, await createUser(t));
      const sessions = [await sessionFor(t, user), await sessionFor(t, user), await sessionFor(t, user)];
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: bearer(sessions[0]!.access_token),
        payload: { scope: 'global' },
      });
      assert.equal(res.statusCode, 204);
      for (const s of sessions) {
        assert.equal(json(await verify(s.access_token)).code, 'session_revoked');
        assert.equal(json(await refresh(s.refresh_token)).code, 'refresh_token_invalid');
      }
      assert.equal((await verify(other.access_token)).statusCode, 200);
    });

    it('needs a token, and refuses an unknown scope', async () => {
      const anonymous = await t.app.inject({ method: 'POST', url: '/api/v1/logout' });
      assert.equal(anonymous.statusCode, 401);
      assert.equal(json(anonymous).code, 'unauthenticated');
      assert.match(String(anonymous.headers['www-authenticate']), /^Bearer realm="gatehouse"$/);

      const { access_token } = await sessionFor(t, await createUser(t));
      const bad = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: bearer(access_token),
        payload: { scope: 'everywhere' },
      });
      assert.equal(bad.statusCode, 400);
      assert.equal(json(bad).code, 'validation_failed');
      assert.equal((await verify(access_token)).statusCode, 200, 'a refused logout leaves the session alive');
    });

    it('a second logout with the same token is refused: the session is already gone', async () => {
      const { access_token } = await sessionFor(t, await createUser(t));
      const headers = bearer(access_token);
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/logout', headers })).statusCode, 204);
      const again = await t.app.inject({ method: 'POST', url: '/api/v1/logout', headers });
      assert.equal(again.statusCode, 401);
      assert.equal(json(again).code, 'session_revoked');
    });
  });
}
