import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import * as oidc from 'openid-client';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

/*
 * discovery-follows-the-host: the endpoint URLs of both discovery documents (and every other URL
 * oidc-provider builds: the resume URL the hosted sign-in returns, the logout form's action,
 * `registration_client_uri`) followed the request's `Host`, or `X-Forwarded-Host` under TRUST_PROXY;
 * only `issuer` was PUBLIC_URL. A forged header could point a relying party, or a shared cache's copy
 * of the document, at another host. Now the library sees PUBLIC_URL's origin on every request
 * (docs/api.md §17: the issuer is PUBLIC_URL), and discovery sends one Cache-Control whichever
 * module answers it (docs/oauth.md, "Settings": the choices).
 */

const DOCUMENTS = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'];
const REDIRECT = 'http://127.0.0.1:9/cb';
const CACHE = 'public, max-age=300';

/** The forged requests: another Host; an honest Host with a forged X-Forwarded-Host and -Proto. */
const FORGED: Array<[string, Record<string, string>]> = [
  ['a forged Host', { host: 'evil.example' }],
  [
    'a forged X-Forwarded-Host',
    { host: new URL(PUBLIC_URL).host, 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
  ],
];

/** Every string in a document that looks like a URL. */
function urls(value: unknown): string[] {
  if (typeof value === 'string') return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(urls);
  if (value && typeof value === 'object') return Object.values(value).flatMap(urls);
  return [];
}

function assertOnPublicUrl(found: string[], label: string): void {
  assert.ok(found.length > 0, `${label}: some URL to check`);
  for (const url of found) {
    assert.ok(url === PUBLIC_URL || url.startsWith(`${PUBLIC_URL}/`), `${label}: ${url} is on PUBLIC_URL`);
  }
}

/** A browser on inject: its cookie jar and the forged headers on every request. */
function browser(t: TestApp, forged: Record<string, string>) {
  const jar = new Map<string, string>();
  return async (
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string> = {},
    payload?: string,
  ): Promise<LightMyRequestResponse> => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await t.app.inject({
      method,
      url,
      headers: { ...forged, ...headers, ...(cookie ? { cookie } : {}) },
      ...(payload === undefined ? {} : { payload }),
    });
    for (const c of res.cookies) {
      if (c.value === '' || (c.expires && c.expires.getTime() < Date.now())) jar.delete(c.name);
      else jar.set(c.name, c.value);
    }
    return res;
  };
}

for (const dialect of DIALECTS) {
  describe(`oauth URLs are PUBLIC_URL's whatever Host or X-Forwarded-Host says (${dialect})`, () => {
    const apps: TestApp[] = [];
    after(async () => {
      for (const t of apps) await t.destroy();
    });
    const start = async (env: Record<string, string>) => {
      const t = await buildTestApp(dialect, { env });
      apps.push(t);
      return t;
    };

    for (const trustProxy of ['false', 'true']) {
      it(`TRUST_PROXY=${trustProxy}: both documents, the sign-in's resume URL, the logout form and registration_client_uri`, async () => {
        const t = await start({
          API_FORM: 'full',
          TRUST_PROXY: trustProxy,
          OAUTH_DYNAMIC_REGISTRATION: 'open',
        });
        const login = await t.app.inject({
          method: 'POST',
          url: '/api/v1/login',
          payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
        });
        const access = json<{ access_token: string }>(login).access_token;
        const made = await t.app.inject({
          method: 'POST',
          url: '/api/v1/clients',
          headers: { authorization: `Bearer ${access}` },
          payload: {
            name: 'Notes',
            application_type: 'native',
            redirect_uris: [REDIRECT],
            post_logout_redirect_uris: [REDIRECT],
            first_party: true,
          },
        });
        assert.equal(made.statusCode, 201, made.body);
        const clientId = json<{ client_id: string }>(made).client_id;

        for (const [label, forged] of FORGED) {
          for (const path of DOCUMENTS) {
            const res = await t.app.inject({
              url: path,
              headers: { ...forged, origin: 'https://rp.example' },
            });
            assert.equal(res.statusCode, 200, `${label} ${path}`);
            const doc = json(res);
            assert.equal(doc.issuer, PUBLIC_URL);
            assert.equal(doc.authorization_endpoint, `${PUBLIC_URL}/oauth2/authorize`, `${label} ${path}`);
            assertOnPublicUrl(urls(doc), `${label} ${path}`);
            assert.equal(
              res.headers['cache-control'],
              CACHE,
              `${label} ${path}: one answer for every requester`,
            );
            // The CORS answer names the requesting origin, so a shared cache must key on it.
            assert.equal(res.headers['access-control-allow-origin'], 'https://rp.example');
            assert.match(String(res.headers.vary), /\borigin\b/i);
            const honest = await t.app.inject({ url: path });
            assert.deepEqual(json(honest), doc, `${label} ${path}: the same document as an honest request's`);
          }

          // The authorization request, the hosted sign-in (Bearer, as the page's script) and the resume.
          const go = browser(t, forged);
          const verifier = oidc.randomPKCECodeVerifier();
          const query = new URLSearchParams({
            client_id: clientId,
            redirect_uri: REDIRECT,
            response_type: 'code',
            scope: 'openid',
            state: 'st',
            code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
            code_challenge_method: 'S256',
          });
          const authorize = await go('GET', `/oauth2/authorize?${query}`);
          assert.equal(authorize.statusCode, 303, authorize.body);
          // The library's cookies follow PUBLIC_URL's scheme (http here), not a forged X-Forwarded-Proto.
          assert.ok(authorize.cookies.length > 0);
          for (const c of authorize.cookies)
            assert.notEqual((c as { secure?: boolean }).secure, true, c.name);
          const interaction = new URL(String(authorize.headers.location), PUBLIC_URL);
          assert.equal(interaction.origin, new URL(PUBLIC_URL).origin, `${label}: the interaction page`);
          const signedIn = await go(
            'POST',
            `${interaction.pathname}/login`,
            { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
            '{}',
          );
          assert.equal(signedIn.statusCode, 200, signedIn.body);
          const resume = json<{ redirect_to: string }>(signedIn).redirect_to;
          assertOnPublicUrl([resume], `${label}: the resume URL`);
          const back = await go('GET', new URL(resume).pathname);
          const callback = new URL(String(back.headers.location));
          assert.equal(callback.origin + callback.pathname, REDIRECT);
          assert.ok(callback.searchParams.get('code'), `${label}: a code`);
          assert.equal(callback.searchParams.get('iss'), PUBLIC_URL, `${label}: the response's iss`);

          // RP-initiated logout: Gatehouse's page around the library's form.
          const logout = await go('GET', `/oauth2/logout?client_id=${clientId}`);
          assert.equal(logout.statusCode, 200, logout.body);
          const actions = [...logout.body.matchAll(/action="([^"]*)"/g)].map((m) => String(m[1]));
          assertOnPublicUrl(actions, `${label}: the logout form`);
          assert.ok(!logout.body.includes('evil.example'), `${label}: the page names no forged host`);

          // RFC 7591 registration: the client's RFC 7592 address.
          const registered = await go(
            'POST',
            '/oauth2/register',
            { 'content-type': 'application/json' },
            JSON.stringify({
              client_name: 'Agent',
              application_type: 'native',
              redirect_uris: [REDIRECT],
              token_endpoint_auth_method: 'none',
            }),
          );
          assert.equal(registered.statusCode, 201, registered.body);
          const uri = json<{ registration_client_uri: string }>(registered).registration_client_uri;
          assertOnPublicUrl([uri], `${label}: registration_client_uri`);
        }
      });
    }

    it("while oauth is off both documents are PUBLIC_URL's, with the same Cache-Control", async () => {
      const t = await start({ API_FORM: 'A', TRUST_PROXY: 'true' });
      for (const [label, forged] of FORGED) {
        for (const path of DOCUMENTS) {
          const res = await t.app.inject({ url: path, headers: forged });
          assert.equal(res.statusCode, 200);
          const doc = json(res);
          assert.equal(doc.authorization_endpoint, undefined, 'no endpoint Gatehouse does not serve');
          assertOnPublicUrl(urls(doc), `${label} ${path}`);
          assert.equal(res.headers['cache-control'], CACHE, `${label} ${path}`);
        }
      }
    });
  });
}
