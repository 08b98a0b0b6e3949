import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashOpaqueToken } from '../../src/identity/tokens/opaque-tokens.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

/*
 * Refresh tokens slide a session's expiry, but never past an absolute end (SESSION_MAX_LIFETIME_S
 * after the login; ASVS 10.4.8). Time is moved by ageing the session row, not by waiting.
 */
const MAX_S = 3600;

interface Tokens {
  access_token: string;
  refresh_token: string;
  refresh_expires_in: number;
}

for (const dialect of DIALECTS) {
  describe(`absolute session lifetime [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { SESSION_MAX_LIFETIME_S: String(MAX_S) } });
    });
    after(() => t.destroy());

    const login = async () =>
      json<Tokens>(
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/login',
          payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
        }),
      );
    const refresh = (token: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/refresh-token', payload: { refresh_token: token } });
    const sessionOf = async (token: string) => {
      const row = await t.ctx.db
        .selectFrom('refresh_tokens')
        .select('session_id')
        .where('token_hash', '=', hashOpaqueToken(token))
        .executeTakeFirstOrThrow();
      return row.session_id;
    };
    /** Moves the session's login back in time, so `leftS` seconds of its absolute lifetime remain. */
    const age = async (sessionId: string, leftS: number) => {
      await t.ctx.db
        .updateTable('sessions')
        .set({ created_at: Date.now() - MAX_S * 1000 + leftS * 1000 })
        .where('id', '=', sessionId)
        .execute();
    };

    it('defaults to 90 days, longer than the 30-day refresh token', () => {
      const config = loadConfig({});
      assert.equal(config.sessionMaxLifetimeS, 7_776_000);
      assert.ok(config.sessionMaxLifetimeS > config.refreshTokenTtlS);
    });

    it('a first refresh token never outlives the session: capped at login when the maximum is shorter', async () => {
      const tokens = await login();
      assert.equal(tokens.refresh_expires_in, MAX_S);
      const res = await refresh(tokens.refresh_token);
      assert.equal(res.statusCode, 200);
      assert.ok(json<Tokens>(res).refresh_expires_in <= MAX_S);
    });

    it('refreshing near the end hands out a token that ends with the session, not a full TTL later', async () => {
      const tokens = await login();
      const sessionId = await sessionOf(tokens.refresh_token);
      await age(sessionId, 120);
      const res = await refresh(tokens.refresh_token);
      assert.equal(res.statusCode, 200, res.body);
      const next = json<Tokens>(res);
      assert.ok(next.refresh_expires_in > 0 && next.refresh_expires_in <= 120, `${next.refresh_expires_in}`);
      const session = await t.ctx.db
        .selectFrom('sessions')
        .select(['created_at', 'expires_at'])
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      assert.ok(
        session.expires_at <= session.created_at + MAX_S * 1000,
        'the session expiry stays inside the bound',
      );
    });

    it('past the absolute end, the refresh token is refused even though it has not expired itself', async () => {
      const tokens = await login();
      await age(await sessionOf(tokens.refresh_token), -1);
      const res = await refresh(tokens.refresh_token);
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'refresh_token_invalid');
    });
  });
}
