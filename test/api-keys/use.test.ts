import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { FULL, keyHeaders, makeKey, problemCode } from './helpers.ts';

type Verify = {
  valid: boolean;
  reason?: string;
  retry_after_s?: number;
  owner?: { id: string };
  roles?: string[];
};

for (const dialect of DIALECTS) {
  describe(`api keys: on Gatehouse's own API and verify [${dialect}]`, () => {
    let t: TestApp;
    let admin: Record<string, string>;
    let verifier: string;
    before(async () => {
      t = await buildTestApp(dialect, { env: FULL });
      admin = await authHeaders(t, await firstAdmin(t));
      verifier = (await makeKey(t, admin, { name: 'verifier', scopes: ['api_keys:verify'] })).key;
    });
    after(() => t.destroy());

    const verify = async (key: string, headers: Record<string, string> = keyHeaders(verifier)) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys/verify',
        headers,
        payload: { key },
      });
      assert.equal(res.statusCode, 200, res.body);
      return json<Verify>(res);
    };

    it('a key acts as its owner within its scopes; a missing scope is 403 insufficient_scope (RFC 6750)', async () => {
      const { key } = await makeKey(t, admin, { scopes: ['users:read'] });
      const list = await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: keyHeaders(key) });
      assert.equal(list.statusCode, 200);
      // One endpoint of each group the key lacks, read and write alike.
      const samples: Array<[string, string, string]> = [
        ['PUT', '/api/v1/users/01900000-0000-7000-8000-000000000000', 'users:write'],
        ['GET', '/api/v1/admin/modules', 'admin:read'],
        ['GET', '/api/v1/webhooks', 'webhooks:read'],
        ['GET', '/api/v1/profile', 'auth:read'],
        ['GET', '/api/v1/api-keys', 'api_keys:read'],
        ['GET', '/api/v1/admin/audit', 'admin:read'],
        ['GET', '/api/v1/clients', 'clients:read'],
        ['GET', '/api/v1/idp/providers', 'idp:read'],
        ['POST', '/api/v1/api-keys/verify', 'api_keys:verify'],
      ];
      for (const [method, url, scope] of samples) {
        const res = await t.app.inject({
          method: method as 'GET',
          url,
          headers: keyHeaders(key),
          payload: method === 'GET' ? undefined : { name: 'x' },
        });
        assert.equal(res.statusCode, 403, `${method} ${url}`);
        assert.equal(problemCode(res), 'insufficient_scope');
        assert.equal(
          res.headers['www-authenticate'],
          `Bearer realm="gatehouse", error="insufficient_scope", scope="${scope}"`,
        );
      }
    });

    it('null scopes: everything the owner may do, but api_keys:verify only for an admin owner', async () => {
      const { key } = await makeKey(t, admin, { scopes: null });
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: keyHeaders(key) })).statusCode,
        200,
      );
      assert.equal((await verify('gate_x', keyHeaders(key))).valid, false);
      const person = await createUser(t, { email: 'p@use.test' });
      const p = await makeKey(t, await authHeaders(t, person));
      const asPerson = await t.app.inject({
        method: 'GET',
        url: '/api/v1/users',
        headers: keyHeaders(p.key),
      });
      assert.equal(asPerson.statusCode, 403);
      assert.equal(problemCode(asPerson), 'forbidden', 'the owner is no admin');
      const v = await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys/verify',
        headers: keyHeaders(p.key),
        payload: { key: p.key },
      });
      assert.equal(problemCode(v), 'insufficient_scope');
      const self = await t.app.inject({ method: 'GET', url: '/api/v1/profile', headers: keyHeaders(p.key) });
      assert.equal(self.statusCode, 200, self.body);
    });

    it('credential endpoints refuse keys (403 forbidden); verify-token answers 401 token_invalid', async () => {
      const { key } = await makeKey(t, admin, { scopes: null });
      const refused: Array<[string, string]> = [
        ['PUT', '/api/v1/change-password'],
        ['POST', '/api/v1/logout'],
        ['GET', '/api/v1/sessions'],
        ['POST', '/api/v1/mfa/totp'],
        ['GET', '/api/v1/passkeys'],
        ['POST', '/api/v1/api-keys'],
        ['DELETE', '/api/v1/api-keys/01900000-0000-7000-8000-000000000000'],
        ['POST', '/api/v1/service-accounts'],
        ['DELETE', '/api/v1/users/01900000-0000-7000-8000-000000000000/mfa'],
        ['POST', '/api/v1/users/01900000-0000-7000-8000-000000000000/password-reset'],
      ];
      for (const [method, url] of refused) {
        const res = await t.app.inject({
          method: method as 'GET',
          url,
          headers: keyHeaders(key),
          payload: method === 'GET' || method === 'DELETE' ? undefined : {},
        });
        assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`);
        assert.equal(problemCode(res), 'forbidden', `${method} ${url}`);
      }
      const me = await firstAdmin(t);
      const pw = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${me.id}`,
        headers: keyHeaders(key),
        payload: { password: 'x'.repeat(20) },
      });
      assert.equal(problemCode(pw), 'forbidden');
      const name = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${me.id}`,
        headers: keyHeaders(key),
        payload: { name: 'Root' },
      });
      assert.equal(name.statusCode, 200, 'the rest of an update is allowed');
      const vt = await t.app.inject({ method: 'GET', url: '/api/v1/verify-token', headers: keyHeaders(key) });
      assert.equal(vt.statusCode, 401);
      assert.equal(problemCode(vt), 'token_invalid');
    });

    it('every verify reason, and the matching /api/v1 answers', async () => {
      const person = await createUser(t, { email: 'reasons@use.test' });
      const ph = await authHeaders(t, person);
      const live = await makeKey(t, ph, { scopes: ['auth:read'] });
      const ok = await verify(live.key);
      assert.equal(ok.valid, true);
      assert.equal(ok.owner?.id, person.id);
      assert.deepEqual(ok.roles, []);
      // invalid: an unknown string answers exactly this; a mistyped key too.
      assert.deepEqual(await verify('hello'), { valid: false, reason: 'invalid' });
      const typo = `${live.key.slice(0, -1)}${live.key.endsWith('a') ? 'b' : 'a'}`;
      assert.deepEqual(await verify(typo), { valid: false, reason: 'invalid' });
      const typoUse = await t.app.inject({
        method: 'GET',
        url: '/api/v1/profile',
        headers: keyHeaders(typo),
      });
      assert.equal(problemCode(typoUse), 'token_invalid');
      assert.match(String(typoUse.headers['www-authenticate']), /error="invalid_token"/);
      // expired
      const exp = await makeKey(t, ph);
      await t.ctx.db
        .updateTable('api_keys')
        .set({ expires_at: Date.now() - 1 })
        .where('id', '=', exp.id)
        .execute();
      assert.deepEqual(await verify(exp.key), { valid: false, reason: 'expired' });
      const expUse = await t.app.inject({
        method: 'GET',
        url: '/api/v1/profile',
        headers: keyHeaders(exp.key),
      });
      assert.equal(problemCode(expUse), 'token_expired');
      // revoked
      const rev = await makeKey(t, ph);
      await t.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${rev.id}`, headers: ph });
      assert.deepEqual(await verify(rev.key), { valid: false, reason: 'revoked' });
      assert.equal(
        problemCode(
          await t.app.inject({ method: 'GET', url: '/api/v1/profile', headers: keyHeaders(rev.key) }),
        ),
        'token_invalid',
      );
      // owner_disabled, and enabling again restores the key
      await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${person.id}`,
        headers: admin,
        payload: { status: 'disabled' },
      });
      assert.deepEqual(await verify(live.key), { valid: false, reason: 'owner_disabled' });
      const disUse = await t.app.inject({
        method: 'GET',
        url: '/api/v1/profile',
        headers: keyHeaders(live.key),
      });
      assert.equal(disUse.statusCode, 403);
      assert.equal(problemCode(disUse), 'account_disabled');
      await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${person.id}`,
        headers: admin,
        payload: { status: 'active' },
      });
      assert.equal((await verify(live.key)).valid, true);
      // rate_limited
      // (the disable ended the person's sessions: an admin makes this one for them)
      const limited = await makeKey(t, admin, {
        user_id: person.id,
        rate_limit: { requests: 2, window_s: 60 },
      });
      assert.equal((await verify(limited.key)).valid, true);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/api/v1/profile', headers: keyHeaders(limited.key) }))
          .statusCode,
        200,
      );
      const third = await verify(limited.key);
      assert.equal(third.reason, 'rate_limited');
      assert.ok(third.retry_after_s! >= 1 && third.retry_after_s! <= 60);
      const use429 = await t.app.inject({
        method: 'GET',
        url: '/api/v1/profile',
        headers: keyHeaders(limited.key),
      });
      assert.equal(use429.statusCode, 429);
      assert.equal(problemCode(use429), 'rate_limited');
      assert.ok(Number(use429.headers['retry-after']) >= 1);
      // deleting the owner revokes its keys, with an event per key
      await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${person.id}`, headers: admin });
      assert.deepEqual(await verify(live.key), { valid: false, reason: 'revoked' });
      const audits = await t.ctx.db
        .selectFrom('audit_log')
        .select(['target_id', 'details'])
        .where('action', '=', 'api_key.revoke')
        .execute();
      assert.ok(audits.some((a) => a.target_id === live.id));
      for (const a of audits) assert.doesNotMatch(a.details ?? '', /gate_[0-9A-Za-z]{38}/);
    });

    it('verify needs an admin or api_keys:verify; a plain token of a person is 403', async () => {
      const person = await createUser(t, { email: 'noverify@use.test' });
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys/verify',
        headers: await authHeaders(t, person),
        payload: { key: 'x' },
      });
      assert.equal(res.statusCode, 403);
      const byAdmin = await verify('x', admin);
      assert.deepEqual(byAdmin, { valid: false, reason: 'invalid' });
    });

    it('the rate limit is exact under 100 parallel verifications', async () => {
      const { key } = await makeKey(t, admin, { rate_limit: { requests: 37, window_s: 3600 } });
      const answers = await Promise.all(Array.from({ length: 100 }, () => verify(key)));
      assert.equal(answers.filter((a) => a.valid).length, 37);
      assert.equal(answers.filter((a) => a.reason === 'rate_limited').length, 63);
    });

    it('last_used_at is written at most once a minute', async () => {
      const k = await makeKey(t, admin);
      await verify(k.key);
      const first = await t.ctx.db
        .selectFrom('api_keys')
        .select('last_used_at')
        .where('id', '=', k.id)
        .executeTakeFirstOrThrow();
      assert.ok(first.last_used_at !== null);
      await verify(k.key);
      const second = await t.ctx.db
        .selectFrom('api_keys')
        .select('last_used_at')
        .where('id', '=', k.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(second.last_used_at), Number(first.last_used_at));
    });

    it('while api_keys is off keys authenticate nowhere (401) and are kept', async () => {
      const k = await makeKey(t, admin, { scopes: ['users:read'] });
      const off = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/api_keys',
        headers: admin,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200);
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: keyHeaders(k.key) });
      assert.equal(res.statusCode, 401);
      assert.equal(problemCode(res), 'token_invalid');
      await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/api_keys',
        headers: admin,
        payload: { enabled: true },
      });
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: keyHeaders(k.key) })).statusCode,
        200,
      );
    });
  });
}
