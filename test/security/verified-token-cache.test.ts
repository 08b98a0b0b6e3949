import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { ApiError } from '../../src/errors.ts';
import { revokeSession } from '../../src/modules/auth/sessions.service.ts';
import { updateUser } from '../../src/modules/users/users.queries.ts';
import { createAccessTokens } from '../../src/security/access-tokens.ts';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

// verify-token remembers verified signatures (bench hot spot). These pin what the cache must never
// change: session liveness is checked on every request, and exp and key removal still apply.

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return err.code;
  }
}

for (const dialect of DIALECTS) {
  describe(`verified-token cache [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    const verify = (token: string) =>
      t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${token}` } });

    it('refuses a remembered token at once after its session is revoked', async () => {
      const user = await createUser(t);
      const { access_token } = await sessionFor(t, user);
      assert.equal((await verify(access_token)).statusCode, 200);
      assert.equal((await verify(access_token)).statusCode, 200);
      const claims = await t.ctx.accessTokens.verify(access_token);
      await revokeSession(t.ctx.db, claims.sid, 'logout');
      const res = await verify(access_token);
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'session_revoked');
    });

    it('refuses a remembered token at once after its user is disabled', async () => {
      const user = await createUser(t);
      const { access_token } = await sessionFor(t, user);
      assert.equal((await verify(access_token)).statusCode, 200);
      await updateUser(t.ctx.db, user.id, { status: 'disabled', updated_at: Date.now() });
      const res = await verify(access_token);
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'session_revoked');
    });

    it('does not let a remembered token vouch for an altered one', async () => {
      const user = await createUser(t);
      const { access_token } = await sessionFor(t, user);
      assert.equal((await verify(access_token)).statusCode, 200);
      const [h, p, s = ''] = access_token.split('.');
      const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BA' : 'AA'}`;
      const res = await verify(flipped);
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'token_invalid');
    });

    it('refuses a remembered token once its key is no longer loaded', async () => {
      const other = await t.restart();
      try {
        const user = await createUser(other);
        const { access_token } = await sessionFor(other, user);
        assert.equal(await code(other.ctx.accessTokens.verify(access_token)), 'ok');
        await other.ctx.db.deleteFrom('signing_keys').execute();
        await other.ctx.keys.reload();
        assert.equal(await code(other.ctx.accessTokens.verify(access_token)), 'token_invalid');
      } finally {
        await other.close();
      }
    });
  });
}

describe('verified-token cache and expiry', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp('sqlite');
  });
  after(() => {
    mock.timers.reset();
    return t.destroy();
  });

  it('refuses a remembered token once it has expired', async () => {
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const tokens = createAccessTokens(t.ctx.keys, { issuer: PUBLIC_URL, audience: PUBLIC_URL, ttlS: 60 });
    const { token } = await tokens.sign({ userId: 'u1', sessionId: 's1', role: 'user' });
    assert.equal(await code(tokens.verify(token)), 'ok');
    mock.timers.tick(59_000);
    assert.equal(await code(tokens.verify(token)), 'ok');
    mock.timers.tick(1_000);
    assert.equal(await code(tokens.verify(token)), 'token_expired');
    mock.timers.reset();
  });

  it('verifies the same with the cache turned off', async () => {
    const tokens = createAccessTokens(t.ctx.keys, {
      issuer: PUBLIC_URL,
      audience: PUBLIC_URL,
      ttlS: 60,
      cacheSize: 0,
    });
    const { token } = await tokens.sign({ userId: 'u1', sessionId: 's1', role: 'user' });
    assert.equal(await code(tokens.verify(token)), 'ok');
    assert.equal(await code(tokens.verify(token)), 'ok');
    assert.equal(await code(tokens.verify(`${token}x`)), 'token_invalid');
  });
});
