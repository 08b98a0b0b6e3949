import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

const COOKIE_MODE = { 'x-gatehouse-session': 'cookie', origin: PUBLIC_URL };

function refreshCookie(res: LightMyRequestResponse): { value: string; attributes: string } | null {
  const header = res.headers['set-cookie'];
  const line = (Array.isArray(header) ? header : header === undefined ? [] : [header]).find((c) =>
    c.startsWith('gatehouse_refresh='),
  );
  if (line === undefined) return null;
  const [pair = '', ...rest] = line.split('; ');
  return { value: pair.slice('gatehouse_refresh='.length), attributes: rest.join('; ') };
}

for (const dialect of DIALECTS) {
  describe(`browser sessions: cookie mode of the token routes [${dialect}]`, () => {
    let t: TestApp;
    const login = (headers: Record<string, string>, remoteAddress = '10.9.0.1') =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        headers,
        payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
        remoteAddress,
      });
    const refresh = (headers: Record<string, string>, payload?: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        headers,
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });

    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('API clients are unchanged: no header, the refresh token in the body and no cookie', async () => {
      const res = await login({});
      assert.equal(res.statusCode, 200);
      assert.equal(typeof json(res).refresh_token, 'string');
      assert.equal(res.headers['set-cookie'], undefined);
      const next = await refresh({}, { refresh_token: json(res).refresh_token });
      assert.equal(next.statusCode, 200);
      assert.equal(next.headers['set-cookie'], undefined);
    });

    it('cookie mode: the refresh token moves into an HttpOnly, SameSite=Strict cookie scoped to refresh', async () => {
      const res = await login(COOKIE_MODE);
      assert.equal(res.statusCode, 200);
      const body = json(res);
      assert.equal(body.refresh_token, undefined, 'a page script never sees the refresh token');
      assert.equal(typeof body.access_token, 'string');
      assert.equal(res.headers['cache-control'], 'no-store');
      const cookie = refreshCookie(res);
      assert.ok(cookie && cookie.value.length >= 43);
      assert.equal(
        cookie.attributes,
        'Max-Age=2592000; Path=/api/v1/refresh-token; HttpOnly; Secure; SameSite=Strict',
      );

      // The refresh reads the cookie (no body), rotates it, and the old one is then spent.
      const next = await refresh({ ...COOKIE_MODE, cookie: `gatehouse_refresh=${cookie.value}` });
      assert.equal(next.statusCode, 200);
      const rotated = refreshCookie(next);
      assert.ok(rotated && rotated.value !== cookie.value);
      assert.equal(json(next).refresh_token, undefined);

      // Logout (bearer) in cookie mode clears the cookie.
      const out = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: { ...COOKIE_MODE, authorization: `Bearer ${json(next).access_token}` },
      });
      assert.equal(out.statusCode, 204);
      assert.match(refreshCookie(out)?.attributes ?? '', /Max-Age=0/);
      const dead = await refresh({ ...COOKIE_MODE, cookie: `gatehouse_refresh=${rotated.value}` });
      assert.equal(dead.statusCode, 401);
      assert.equal(json(dead).code, 'refresh_token_invalid');
      assert.match(refreshCookie(dead)?.attributes ?? '', /Max-Age=0/, 'a dead cookie is cleared');
    });

    it('CSRF: cookie mode without Origin, or with another origin, is 403 forbidden before any work', async () => {
      for (const headers of [
        { 'x-gatehouse-session': 'cookie' },
        { ...COOKIE_MODE, origin: 'https://evil.example' },
        { ...COOKIE_MODE, origin: 'null' },
        { ...COOKIE_MODE, origin: `${PUBLIC_URL}.evil.example` },
      ]) {
        const res = await login(headers);
        assert.equal(res.statusCode, 403, JSON.stringify(headers));
        assert.equal(json(res).code, 'forbidden');
        assert.equal(res.headers['set-cookie'], undefined);
      }
      const cookieLogin = refreshCookie(await login(COOKIE_MODE));
      assert.ok(cookieLogin);
      const forged = await refresh({
        'x-gatehouse-session': 'cookie',
        origin: 'https://evil.example',
        cookie: `gatehouse_refresh=${cookieLogin.value}`,
      });
      assert.equal(forged.statusCode, 403);
      assert.equal(json(forged).code, 'forbidden');
      // The cookie is still good: the refusal spent nothing.
      const real = await refresh({ ...COOKIE_MODE, cookie: `gatehouse_refresh=${cookieLogin.value}` });
      assert.equal(real.statusCode, 200);
    });

    it('CSRF: the cookie alone (a cross-site form post, no header) is never read', async () => {
      const cookie = refreshCookie(await login(COOKIE_MODE));
      assert.ok(cookie);
      const res = await refresh({ origin: PUBLIC_URL, cookie: `gatehouse_refresh=${cookie.value}` });
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).code, 'validation_failed');
    });

    it('a cookie refresh takes no body, needs the cookie, and the header takes only "cookie"', async () => {
      const cookie = refreshCookie(await login(COOKIE_MODE));
      assert.ok(cookie);
      const withBody = await refresh(
        { ...COOKIE_MODE, cookie: `gatehouse_refresh=${cookie.value}` },
        { refresh_token: 'x'.repeat(43) },
      );
      assert.equal(withBody.statusCode, 400);
      // No cookie is "nobody is signed in here", not a failure: 204 without a body or a cookie, so a
      // page's first load logs no failed request (docs/pages.md).
      const missing = await refresh(COOKIE_MODE);
      assert.equal(missing.statusCode, 204);
      assert.equal(missing.body, '');
      assert.equal(missing.headers['set-cookie'], undefined);
      assert.equal(missing.headers['cache-control'], 'no-store');
      const odd = await login({ ...COOKIE_MODE, 'x-gatehouse-session': 'yes' });
      assert.equal(odd.statusCode, 400);
    });

    it('CORS never lets another origin send the cookie-mode header', async () => {
      const cors = await buildTestApp(dialect, { env: { CORS_ORIGINS: 'https://app.example' } });
      try {
        const res = await cors.app.inject({
          method: 'OPTIONS',
          url: '/api/v1/refresh-token',
          headers: {
            origin: 'https://app.example',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'x-gatehouse-session',
          },
        });
        assert.doesNotMatch(
          String(res.headers['access-control-allow-headers'] ?? ''),
          /x-gatehouse-session/i,
        );
      } finally {
        await cors.destroy();
      }
    });

    it('change-password in cookie mode replaces the cookie with the new session', async () => {
      const first = await login(COOKIE_MODE, '10.9.0.2');
      const res = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/change-password',
        headers: { ...COOKIE_MODE, authorization: `Bearer ${json(first).access_token}` },
        payload: { current_password: ADMIN_PASSWORD, new_password: ADMIN_PASSWORD },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(json(res).refresh_token, undefined);
      const cookie = refreshCookie(res);
      assert.ok(cookie);
      const next = await refresh({ ...COOKIE_MODE, cookie: `gatehouse_refresh=${cookie.value}` });
      assert.equal(next.statusCode, 200);
    });

    it('with pages and console off, cookie mode is refused (404) and the API is unchanged', async () => {
      const admin = json(await login({}, '10.9.0.3'));
      const headers = { authorization: `Bearer ${admin.access_token}` };
      for (const name of ['pages', 'console']) {
        const res = await t.app.inject({
          method: 'PUT',
          url: `/api/v1/admin/modules/${name}`,
          headers,
          payload: { enabled: false },
        });
        assert.equal(res.statusCode, 200);
      }
      try {
        const refused = await login(COOKIE_MODE);
        assert.equal(refused.statusCode, 404);
        assert.equal(json(refused).code, 'module_disabled');
        assert.equal((await login({})).statusCode, 200);
        assert.equal((await t.app.inject({ url: '/account/sign-in' })).statusCode, 404);
      } finally {
        for (const name of ['pages', 'console']) {
          await t.app.inject({
            method: 'PUT',
            url: `/api/v1/admin/modules/${name}`,
            headers,
            payload: { enabled: true },
          });
        }
      }
    });
  });
}
