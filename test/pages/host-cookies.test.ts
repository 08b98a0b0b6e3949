import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { AppContext } from '../../src/kernel/context.types.ts';
import { flowCookie, secondFactorCookie } from '../../src/modules/providers/flow/flow-http.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

/*
 * host-prefix-cookies: the browser session's refresh cookie was `gatehouse_refresh` on the refresh
 * path, so a sibling subdomain (evil.example.com beside auth.example.com) could plant one for the
 * pages to use — its own refresh token, signing the victim into the attacker's account. On an https
 * PUBLIC_URL at the origin's root it is now `__Host-gatehouse_refresh` (Secure, Path=/, no Domain),
 * which a browser takes only from this very host, and a cookie of the plain name is not read there
 * (docs/pages.md, "Cookies"; docs/upgrading.md). On http (development) and under a PUBLIC_URL with a
 * path the plain name and the narrow path stay. The provider sign-in's own cookies follow the same rule.
 */

const HTTPS_URL = 'https://auth.gatehouse.test';

function setCookies(res: LightMyRequestResponse): string[] {
  const header = res.headers['set-cookie'];
  return Array.isArray(header) ? header : header === undefined ? [] : [header];
}

function cookieNamed(
  res: LightMyRequestResponse,
  name: string,
): { value: string; attributes: string } | null {
  const line = setCookies(res).find((c) => c.startsWith(`${name}=`));
  if (line === undefined) return null;
  const [pair = '', ...rest] = line.split('; ');
  return { value: pair.slice(name.length + 1), attributes: rest.join('; ') };
}

function session(t: TestApp, origin: string) {
  const mode = { 'x-gatehouse-session': 'cookie', origin };
  return {
    login: () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        headers: mode,
        payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
        remoteAddress: '10.91.0.1',
      }),
    refresh: (cookie: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/refresh-token', headers: { ...mode, cookie } }),
    logout: (access: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: { ...mode, authorization: `Bearer ${access}` },
      }),
  };
}

for (const dialect of DIALECTS) {
  describe(`__Host- cookies on an https PUBLIC_URL [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { PUBLIC_URL: HTTPS_URL } });
    });
    after(() => t.destroy());

    it('regression: the refresh cookie is __Host-gatehouse_refresh: Secure, Path=/, no Domain', async () => {
      const s = session(t, HTTPS_URL);
      const res = await s.login();
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(cookieNamed(res, 'gatehouse_refresh'), null, 'no cookie of the plain name');
      const cookie = cookieNamed(res, '__Host-gatehouse_refresh');
      assert.ok(cookie && cookie.value.length >= 43);
      assert.equal(cookie.attributes, 'Max-Age=2592000; Path=/; HttpOnly; Secure; SameSite=Strict');
      assert.doesNotMatch(cookie.attributes, /Domain=/i);

      const next = await s.refresh(`__Host-gatehouse_refresh=${cookie.value}`);
      assert.equal(next.statusCode, 200, next.body);
      const rotated = cookieNamed(next, '__Host-gatehouse_refresh');
      assert.ok(rotated && rotated.value !== cookie.value);

      const out = await s.logout(json<{ access_token: string }>(next).access_token);
      assert.equal(out.statusCode, 204);
      assert.match(cookieNamed(out, '__Host-gatehouse_refresh')?.attributes ?? '', /Max-Age=0; Path=\/;/);
    });

    it('regression: a cookie of the plain name (planted by a sibling, or from before the upgrade) is not read', async () => {
      const s = session(t, HTTPS_URL);
      const cookie = cookieNamed(await s.login(), '__Host-gatehouse_refresh');
      assert.ok(cookie);
      // Not read: the request is one without a session cookie, "nobody is signed in here" (204, no
      // body, no cookie set: docs/pages.md), never a refresh of the planted token.
      const res = await s.refresh(`gatehouse_refresh=${cookie.value}`);
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      assert.equal(res.headers['set-cookie'], undefined);
      // Both sent (a planted plain one beside the real one): only the __Host- one counts.
      const both = await s.refresh(`gatehouse_refresh=planted; __Host-gatehouse_refresh=${cookie.value}`);
      assert.equal(both.statusCode, 200, both.body);
    });
  });

  describe(`plain cookie names where __Host- is not possible [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { PUBLIC_URL: 'http://localhost:3000' } });
    });
    after(() => t.destroy());

    it('http development keeps gatehouse_refresh on the refresh path, without Secure', async () => {
      const res = await session(t, 'http://localhost:3000').login();
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(cookieNamed(res, '__Host-gatehouse_refresh'), null);
      assert.equal(
        cookieNamed(res, 'gatehouse_refresh')?.attributes,
        'Max-Age=2592000; Path=/api/v1/refresh-token; HttpOnly; SameSite=Strict',
      );
    });
  });
}

describe('the provider sign-in cookies follow the same rule', () => {
  const ctxAt = (publicUrl: string) => ({ config: { publicUrl } }) as unknown as AppContext;

  it('regression: __Host- with Path=/ on an https root, the plain name on its path elsewhere', () => {
    const https = ctxAt(HTTPS_URL);
    assert.equal(
      flowCookie(https, 'v', 600, false),
      '__Host-gatehouse_idp_flow=v; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=Lax',
    );
    assert.equal(
      flowCookie(https, 'v', 600, true),
      '__Host-gatehouse_idp_flow=v; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=None',
    );
    assert.equal(
      secondFactorCookie(https, 'v', 600),
      '__Host-gatehouse_idp_mfa=v; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=Strict',
    );
    // Under a path, Path=/ would hand them to the origin's other applications: no prefix.
    assert.equal(
      secondFactorCookie(ctxAt('https://example.com/auth'), 'v', 600),
      'gatehouse_idp_mfa=v; Max-Age=600; Path=/auth/api/v1/idp/continue; HttpOnly; Secure; SameSite=Strict',
    );
    assert.equal(
      flowCookie(ctxAt('http://localhost:3000'), 'v', 600, false),
      'gatehouse_idp_flow=v; Max-Age=600; Path=/api/v1/idp/; HttpOnly; SameSite=Lax',
    );
  });
});
