import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { revokeSession, updateUser } from '../../src/identity/index.ts';
import { createAccessTokens } from '../../src/identity/tokens/access-tokens.ts';
import { ApiError } from '../../src/platform/api-error.ts';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

// A token's lifetime and key on the request paths that skip work — the verified-token cache and the
// guard's remembered callers (SQLite) — must still see session revocation, disabling, an altered
// token, an expired token and an unloaded key on the very next request.

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
  describe(`token lifetime on remembered paths [${dialect}]`, () => {
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

describe('remembered callers and expiry', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp('sqlite');
  });
  after(() => {
    mock.timers.reset();
    return t.destroy();
  });

  it('refuses a remembered caller once its token has expired (stillValid checks exp on every hit)', async () => {
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      const short = await t.restart({ ACCESS_TOKEN_TTL_S: '60' });
      try {
        const user = await createUser(short);
        const { access_token } = await sessionFor(short, user);
        const call = () =>
          short.app.inject({
            url: '/api/v1/verify-token',
            headers: { authorization: `Bearer ${access_token}` },
          });
        assert.equal((await call()).statusCode, 200);
        mock.timers.tick(59_000);
        assert.equal((await call()).statusCode, 200);
        mock.timers.tick(1_000);
        const res = await call();
        assert.equal(res.statusCode, 401);
        assert.equal(json(res).code, 'token_expired');
      } finally {
        await short.close();
      }
    } finally {
      mock.timers.reset();
    }
  });

  it('refuses a token remembered by the verified-token cache once it has expired', async () => {
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      const tokens = createAccessTokens(t.ctx.keys, { issuer: PUBLIC_URL, audience: PUBLIC_URL, ttlS: 60 });
      const user = await createUser(t);
      const { token } = await tokens.sign({
        user,
        session: { id: 's1', amr: ['pwd'], authTime: Date.now() },
      });
      assert.equal(await code(tokens.verify(token)), 'ok');
      mock.timers.tick(59_000);
      assert.equal(await code(tokens.verify(token)), 'ok');
      mock.timers.tick(1_000);
      assert.equal(await code(tokens.verify(token)), 'token_expired');
    } finally {
      mock.timers.reset();
    }
  });

  it('verifies the same with the cache turned off (VERIFIED_TOKEN_CACHE_SIZE=0)', async () => {
    const off = await t.restart({ VERIFIED_TOKEN_CACHE_SIZE: '0' });
    try {
      const user = await createUser(off);
      const { access_token } = await sessionFor(off, user);
      assert.equal(await code(off.ctx.accessTokens.verify(access_token)), 'ok');
      assert.equal(await code(off.ctx.accessTokens.verify(access_token)), 'ok');
      assert.equal(await code(off.ctx.accessTokens.verify(`${access_token}x`)), 'token_invalid');
    } finally {
      await off.close();
    }
  });

  it('stillValid holds only for claims this instance verified, until exp', async () => {
    const tokens = createAccessTokens(t.ctx.keys, { issuer: PUBLIC_URL, audience: PUBLIC_URL, ttlS: 60 });
    const user = await createUser(t);
    const { access_token } = await sessionFor(t, user);
    const claims = await tokens.verify(access_token);
    assert.equal(tokens.stillValid(claims), true);
    assert.equal(tokens.stillValid({ ...claims }), false);
    assert.equal(await code(tokens.verify(`${access_token}x`)), 'token_invalid');
  });
});
