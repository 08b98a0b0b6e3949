import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';
import { type OauthStack, startOauthApp } from './support.ts';

/*
 * A single-page app on another origin, with no CORS_ORIGINS (docs/api.md §17): discovery and the
 * JWKS answer any origin, preflights on the endpoints it calls are answered (they got 405), and the
 * token, userinfo and revocation endpoints answer the origins of the calling client's redirect URIs
 * (oidc-provider's client-based CORS) and no other; introspection is for servers, not browsers.
 */

const SPA = 'https://spa.example.test';
const SPA_CALLBACK = `${SPA}/callback`;
const EVIL = 'https://evil.example.test';

for (const dialect of DIALECTS) {
  describe(`oauth for browser apps without CORS_ORIGINS (${dialect})`, () => {
    let f: CodeFlow;
    let spa: Awaited<ReturnType<CodeFlow['client']>>;
    before(async () => {
      f = await startCodeFlow(dialect);
      spa = await f.client('SPA', {
        type: 'public',
        application_type: 'web',
        redirect_uris: [SPA_CALLBACK],
        scopes: ['openid', 'email'],
      });
    });
    after(() => f?.close());

    /** A fetch as the browser sends it from `origin`. */
    const from = (origin: string, path: string, init: RequestInit = {}) =>
      fetch(`${f.s.origin}${path}`, {
        ...init,
        headers: { origin, ...(init.headers as Record<string, string>) },
      });
    const form = (origin: string, path: string, params: Record<string, string>, headers = {}) =>
      from(origin, path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(params).toString(),
      });

    /** The SPA's tokens, exchanged from its own origin as a browser would. */
    const spaTokens = async () => {
      const p = await f.person();
      const { callback, verifier } = await f.authorize(p, { redirect_uri: SPA_CALLBACK }, spa.config);
      const code = callback.searchParams.get('code');
      assert.ok(code, callback.href);
      const params = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: SPA_CALLBACK,
        client_id: spa.app.client_id,
        code_verifier: verifier,
      };
      return { p, params };
    };

    it('answers discovery and the JWKS for any origin', async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const res = await from(EVIL, path);
        assert.equal(res.status, 200, path);
        assert.equal(res.headers.get('access-control-allow-origin'), EVIL, path);
      }
      const jwks = await from(EVIL, '/.well-known/jwks.json');
      assert.equal(jwks.status, 200);
      assert.equal(jwks.headers.get('access-control-allow-origin'), '*');
    });

    it('answers the preflights of token, userinfo, revocation and introspection (204, not 405)', async () => {
      for (const path of ['/oauth2/token', '/oauth2/userinfo', '/oauth2/revoke', '/oauth2/introspect']) {
        const res = await from(SPA, path, {
          method: 'OPTIONS',
          headers: {
            'access-control-request-method': path === '/oauth2/userinfo' ? 'GET' : 'POST',
            'access-control-request-headers': 'authorization, content-type',
          },
        });
        assert.equal(res.status, 204, path);
        assert.equal(res.headers.get('access-control-allow-origin'), SPA, path);
        assert.match(String(res.headers.get('access-control-allow-methods')), /POST/, path);
        assert.match(String(res.headers.get('access-control-allow-headers')), /authorization/, path);
      }
    });

    it("lets the SPA's origin exchange its code, read userinfo and revoke; refuses another origin", async () => {
      const { params } = await spaTokens();
      const refused = await form(EVIL, '/oauth2/token', params);
      assert.equal(refused.status, 400);
      assert.equal(((await refused.json()) as { error: string }).error, 'invalid_request');
      assert.equal(refused.headers.get('access-control-allow-origin'), null);

      // The refusal above happened before the code was used (the library checks the origin when it
      // knows the client): the SPA's own origin still exchanges it.
      const res = await form(SPA, '/oauth2/token', params);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('access-control-allow-origin'), SPA);
      const tokens = (await res.json()) as { access_token: string };

      const bearer = { authorization: `Bearer ${tokens.access_token}` };
      const info = await from(SPA, '/oauth2/userinfo', { headers: bearer });
      assert.equal(info.status, 200);
      assert.equal(info.headers.get('access-control-allow-origin'), SPA);
      const stranger = await from(EVIL, '/oauth2/userinfo', { headers: bearer });
      assert.equal(stranger.status, 400);
      assert.equal(stranger.headers.get('access-control-allow-origin'), null);

      const peek = await form(SPA, '/oauth2/introspect', {
        token: tokens.access_token,
        client_id: spa.app.client_id,
      });
      assert.equal(peek.status, 400, 'introspection is not for browsers');
      assert.equal(peek.headers.get('access-control-allow-origin'), null);

      const revoked = await form(SPA, '/oauth2/revoke', {
        token: tokens.access_token,
        client_id: spa.app.client_id,
      });
      assert.equal(revoked.status, 200);
      assert.equal(revoked.headers.get('access-control-allow-origin'), SPA);
      assert.equal((await from(SPA, '/oauth2/userinfo', { headers: bearer })).status, 401);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`oauth for browser apps beside CORS_ORIGINS (${dialect})`, () => {
    let s: OauthStack;
    const LISTED = 'https://console.example.test';
    before(async () => {
      s = await startOauthApp(dialect, { CORS_ORIGINS: LISTED });
    });
    after(() => s?.close());

    it('answers a preflight at /oauth2/token from an unlisted origin too, and a listed one as before', async () => {
      for (const origin of [SPA, LISTED]) {
        const res = await fetch(`${s.origin}/oauth2/token`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST' },
        });
        assert.equal(res.status, 204, origin);
        assert.equal(res.headers.get('access-control-allow-origin'), origin, origin);
      }
      const jwks = await fetch(`${s.origin}/.well-known/jwks.json`, { headers: { origin: SPA } });
      assert.equal(jwks.headers.get('access-control-allow-origin'), '*');
    });
  });
}
