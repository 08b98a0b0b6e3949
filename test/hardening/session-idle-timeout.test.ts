import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { hashOpaqueToken } from '../../src/identity/tokens/opaque-tokens.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

/*
 * The inactivity timeout (SESSION_IDLE_TIMEOUT_S; ASVS 7.3.1, docs/security.md "Session timeouts"):
 * a session not used (no sign-in, no refresh: an API client's or the hosted pages' cookie refresh)
 * for that long ends. Time is moved by ageing the rows, not by waiting.
 */
const IDLE_S = 1800;
const COOKIE_MODE = { 'x-gatehouse-session': 'cookie', origin: PUBLIC_URL };

interface Tokens {
  access_token: string;
  refresh_token: string;
  refresh_expires_in: number;
}

function refreshCookie(res: LightMyRequestResponse): string | null {
  const header = res.headers['set-cookie'];
  const line = (Array.isArray(header) ? header : header === undefined ? [] : [header]).find((c) =>
    c.startsWith('gatehouse_refresh='),
  );
  return line === undefined ? null : (line.split('; ')[0] ?? '').slice('gatehouse_refresh='.length);
}

for (const dialect of DIALECTS) {
  describe(`session inactivity timeout [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { SESSION_IDLE_TIMEOUT_S: String(IDLE_S) } });
    });
    after(() => t.destroy());

    const login = (headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        headers,
        payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
      });
    const refresh = (token: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/refresh-token', payload: { refresh_token: token } });
    const verify = (accessToken: string) =>
      t.app.inject({
        method: 'GET',
        url: '/api/v1/verify-token',
        headers: { authorization: `Bearer ${accessToken}` },
      });
    const sessionOfAccess = (accessToken: string): string =>
      JSON.parse(Buffer.from(accessToken.split('.')[1] as string, 'base64url').toString('utf8')).sid;
    const sessionRow = (id: string) =>
      t.ctx.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    /**
     * Ages a session as if its last use (sign-in or refresh) was `idleS` seconds ago: every row the
     * use wrote moves back by the same amount (its last use, its end, its refresh tokens' ends).
     */
    const idleFor = async (sessionId: string, idleS: number) => {
      const row = await sessionRow(sessionId);
      const shift = Date.now() - idleS * 1000 - Number(row.last_used_at);
      await t.ctx.db
        .updateTable('sessions')
        .set({ last_used_at: Number(row.last_used_at) + shift, expires_at: Number(row.expires_at) + shift })
        .where('id', '=', sessionId)
        .execute();
      const tokens = await t.ctx.db
        .selectFrom('refresh_tokens')
        .select(['id', 'expires_at'])
        .where('session_id', '=', sessionId)
        .execute();
      for (const token of tokens) {
        await t.ctx.db
          .updateTable('refresh_tokens')
          .set({ expires_at: Number(token.expires_at) + shift })
          .where('id', '=', token.id)
          .execute();
      }
    };

    it('is not set by default: the refresh token lifetime (30 days) bounds an unused session, as before', () => {
      const config = loadConfig({});
      assert.equal(config.sessionIdleTimeoutS, null);
      assert.equal(config.refreshTokenTtlS, 2_592_000);
      assert.equal(loadConfig({ SESSION_IDLE_TIMEOUT_S: '3600' }).sessionIdleTimeoutS, 3600);
    });

    it('must be at least ACCESS_TOKEN_TTL_S (a client in use refreshes once per access token)', () => {
      assert.throws(
        () => loadConfig({ SESSION_IDLE_TIMEOUT_S: '600' }),
        /SESSION_IDLE_TIMEOUT_S must be at least ACCESS_TOKEN_TTL_S \(900\)/,
      );
      assert.throws(() => loadConfig({ SESSION_IDLE_TIMEOUT_S: '30' }), /SESSION_IDLE_TIMEOUT_S/);
    });

    it('a sign-in carries the session one idle window: refresh_expires_in and expires_at', async () => {
      const tokens = json<Tokens>(await login());
      assert.equal(tokens.refresh_expires_in, IDLE_S);
      const row = await sessionRow(sessionOfAccess(tokens.access_token));
      assert.equal(Number(row.expires_at) - Number(row.created_at), IDLE_S * 1000);
    });

    it('a use within the window moves the end on by one window', async () => {
      const tokens = json<Tokens>(await login());
      const sessionId = sessionOfAccess(tokens.access_token);
      await idleFor(sessionId, IDLE_S - 60);
      const res = await refresh(tokens.refresh_token);
      assert.equal(res.statusCode, 200, res.body);
      const next = json<Tokens>(res);
      assert.equal(next.refresh_expires_in, IDLE_S);
      const row = await sessionRow(sessionId);
      assert.ok(Number(row.expires_at) > Date.now() + (IDLE_S - 60) * 1000, 'the end moved on');
      assert.equal((await verify(next.access_token)).statusCode, 200);
    });

    /* idle-session-lives-on: a session left unused kept working until the refresh token's 30 days;
       now SESSION_IDLE_TIMEOUT_S after its last use it ends: its refresh and its access token fail. */
    it('a session unused for the timeout ends: the refresh is refused and the access token with it', async () => {
      const tokens = json<Tokens>(await login());
      const sessionId = sessionOfAccess(tokens.access_token);
      assert.equal((await verify(tokens.access_token)).statusCode, 200);
      await idleFor(sessionId, IDLE_S + 1);
      const res = await refresh(tokens.refresh_token);
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(json<{ code: string }>(res).code, 'refresh_token_invalid');
      const seen = await verify(tokens.access_token);
      assert.equal(seen.statusCode, 401, seen.body);
      assert.equal(json<{ code: string }>(seen).code, 'session_revoked');
    });

    it('the hosted pages’ browser session (refresh cookie) ends the same way', async () => {
      const res = await login(COOKIE_MODE);
      assert.equal(res.statusCode, 200, res.body);
      const cookie = refreshCookie(res);
      assert.ok(cookie);
      assert.match(String(res.headers['set-cookie']), new RegExp(`Max-Age=${IDLE_S};`));
      const sessionId = sessionOfAccess(json<Tokens>(res).access_token);
      // Used within the window: the cookie refresh works and moves the end on.
      await idleFor(sessionId, IDLE_S - 60);
      const used = await t.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        headers: { ...COOKIE_MODE, cookie: `gatehouse_refresh=${cookie}` },
      });
      assert.equal(used.statusCode, 200, used.body);
      const rotated = refreshCookie(used);
      assert.ok(rotated);
      // Then left alone past the window: the next page load's refresh is refused.
      await idleFor(sessionId, IDLE_S + 1);
      const stale = await t.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        headers: { ...COOKIE_MODE, cookie: `gatehouse_refresh=${rotated}` },
      });
      assert.equal(stale.statusCode, 401, stale.body);
      const hash = hashOpaqueToken(rotated);
      const token = await t.ctx.db
        .selectFrom('refresh_tokens')
        .select('expires_at')
        .where('token_hash', '=', hash)
        .executeTakeFirstOrThrow();
      assert.ok(Number(token.expires_at) < Date.now());
    });
  });
}
