import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';
import { type OauthStack, startOauthApp } from './support.ts';

/*
 * What common relying-party libraries need of the authorization server (docs/api.md §17, the
 * contract's relying-party revisions; docs/oauth.md): a web app under development registers its
 * callback on a loopback host over plain http, with the port matched exactly (the library widens
 * the port for native clients only, RFC 8252 §7.3); a confidential client an admin registered with
 * `"pkce_required": false` (passport-openidconnect sends no PKCE) signs in without it, but only with
 * a nonce (RFC 9700 §2.1.1), and no client can give itself that exemption.
 */

const LOCAL = 'http://localhost:3999/auth/callback';

for (const dialect of DIALECTS) {
  describe(`oauth for relying parties: loopback web callbacks (${dialect})`, () => {
    let f: CodeFlow;
    before(async () => {
      f = await startCodeFlow(dialect);
    });
    after(() => f?.close());

    it('accepts http on localhost, 127.0.0.1 and [::1] for a web client; any other http host stays refused', async () => {
      const ok = await f.s.admin('POST', '/api/v1/clients', {
        name: 'Dev app',
        redirect_uris: [LOCAL, 'http://127.0.0.1:8080/cb', 'http://[::1]:8080/cb'],
        post_logout_redirect_uris: ['http://localhost:3999/'],
      });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
      for (const uri of [
        'http://app.example.test/cb',
        'http://localhost.example.test/cb',
        'http://10.0.0.1/cb',
      ]) {
        const refused = await f.s.admin('POST', '/api/v1/clients', { name: 'x', redirect_uris: [uri] });
        assert.equal(refused.status, 400, uri);
        assert.equal(refused.body.code, 'validation_failed', uri);
      }
    });

    it('signs a web app in at http://localhost:<port>, and refuses the same callback on another port', async () => {
      const dev = await f.client('Dev web app', {
        application_type: 'web',
        redirect_uris: [LOCAL],
        grant_types: ['authorization_code'],
      });
      const p = await f.person();
      const tokens = await f.signIn(p, { redirect_uri: LOCAL }, dev.config);
      assert.equal(tokens.claims()?.sub, p.id);
      // The same host on another port is another URI: the library shows its error page, no redirect.
      const other = oidc.buildAuthorizationUrl(dev.config, {
        redirect_uri: 'http://localhost:4000/auth/callback',
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      const res = await fetch(other, { redirect: 'manual' });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null);
      assert.match(await res.text(), /redirect_uri/);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`oauth for relying parties: pkce_required false (${dialect})`, () => {
    let f: CodeFlow;
    let legacy: Awaited<ReturnType<CodeFlow['client']>>;
    before(async () => {
      f = await startCodeFlow(dialect);
      legacy = await f.client('Passport app', { pkce_required: false });
    });
    after(() => f?.close());

    it('is admin-only and for confidential clients: default true, false refused for a public client', async () => {
      assert.equal((await f.s.admin('GET', `/api/v1/clients/${f.app.client_id}`)).body.pkce_required, true);
      assert.equal(
        (await f.s.admin('GET', `/api/v1/clients/${legacy.app.client_id}`)).body.pkce_required,
        false,
      );
      const pub = await f.s.admin('POST', '/api/v1/clients', {
        name: 'SPA',
        type: 'public',
        redirect_uris: ['https://spa.example.test/cb'],
        pkce_required: false,
      });
      assert.equal(pub.status, 400);
      assert.equal(pub.body.code, 'validation_failed');
      assert.match(String(pub.body.detail), /pkce_required/);
      const made = await f.s.admin('POST', '/api/v1/clients', {
        name: 'Later SPA',
        type: 'public',
        redirect_uris: ['https://spa.example.test/cb'],
      });
      const flipped = await f.s.admin('PUT', `/api/v1/clients/${made.body.client_id}`, {
        pkce_required: false,
      });
      assert.equal(flipped.status, 400, 'an update cannot exempt a public client either');
      const back = await f.s.admin('PUT', `/api/v1/clients/${legacy.app.client_id}`, { pkce_required: true });
      assert.equal(back.body.pkce_required, true);
      assert.equal(
        (await f.s.admin('PUT', `/api/v1/clients/${legacy.app.client_id}`, { pkce_required: false })).body
          .pkce_required,
        false,
      );
    });

    it('signs the exempted client in without PKCE when it sends a nonce; the nonce is in the ID token', async () => {
      const p = await f.person();
      const nonce = oidc.randomNonce();
      const { callback, state } = await f.authorize(p, { nonce }, legacy.config, false);
      assert.ok(callback.searchParams.get('code'), callback.href);
      const tokens = await oidc.authorizationCodeGrant(legacy.config, callback, {
        expectedState: state,
        expectedNonce: nonce,
      });
      assert.equal(tokens.claims()?.sub, p.id);
      assert.equal(tokens.claims()?.nonce, nonce);
    });

    it('refuses the exempted client an OpenID request without a nonce (invalid_request, no code)', async () => {
      const p = await f.person();
      for (const pkce of [false, true]) {
        const { callback } = await f.authorize(p, {}, legacy.config, pkce);
        assert.equal(callback.searchParams.get('error'), 'invalid_request', callback.href);
        assert.match(String(callback.searchParams.get('error_description')), /nonce/);
        assert.equal(callback.searchParams.get('code'), null);
      }
    });

    it('still refuses every other client a request without PKCE, nonce or not', async () => {
      const p = await f.person();
      const { callback } = await f.authorize(p, { nonce: oidc.randomNonce() }, f.config, false);
      assert.equal(callback.searchParams.get('error'), 'invalid_request');
      assert.match(String(callback.searchParams.get('error_description')), /PKCE/);
      assert.equal(callback.searchParams.get('code'), null);
    });
  });

  describe(`oauth for relying parties: a registering client cannot drop PKCE (${dialect})`, () => {
    let s: OauthStack;
    before(async () => {
      s = await startOauthApp(dialect, { OAUTH_DYNAMIC_REGISTRATION: 'open' });
    });
    after(() => s?.close());

    it('answers invalid_client_metadata to a registration with pkce_required, and stores nothing', async () => {
      const res = await fetch(`${s.origin}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Sneaky',
          redirect_uris: ['http://127.0.0.1:8123/callback'],
          pkce_required: false,
        }),
      });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_client_metadata');
      assert.match(body.error_description, /pkce_required/);
      assert.deepEqual((await s.admin('GET', '/api/v1/clients')).body.data, []);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`oauth for relying parties: a resource's JWT of a user grant (${dialect})`, () => {
    const API = 'https://notes.example.test/';
    let f: CodeFlow;
    before(async () => {
      f = await startCodeFlow(dialect);
      const api = await f.s.admin('POST', '/api/v1/resources', {
        identifier: API,
        name: 'Notes API',
        scopes: [{ name: 'notes:read', description: 'Read your notes' }],
      });
      assert.equal(api.status, 201, JSON.stringify(api.body));
    });
    after(() => f?.close());

    it('carries auth_time and amr (RFC 9068 §2.2.1), at the code exchange and after a refresh', async () => {
      const notes = await f.client('Notes app', {
        first_party: true,
        scopes: ['openid', 'email', 'notes:read'],
        resources: [API],
      });
      const p = await f.person();
      const { callback, verifier, state } = await f.authorize(
        p,
        { scope: 'openid notes:read', resource: API },
        notes.config,
      );
      const tokens = await oidc.authorizationCodeGrant(
        notes.config,
        callback,
        { pkceCodeVerifier: verifier, expectedState: state },
        { resource: API },
      );
      const jwks = createRemoteJWKSet(new URL(`${f.s.origin}/.well-known/jwks.json`));
      const verify = async (token: string) =>
        (await jwtVerify(token, jwks, { issuer: f.s.origin, audience: API, typ: 'at+jwt' })).payload;
      const first = await verify(tokens.access_token);
      assert.equal(first.sub, p.id);
      assert.equal(first.auth_time, tokens.claims()?.auth_time, "the ID token's auth_time");
      assert.equal(typeof first.auth_time, 'number');
      assert.deepEqual(first.amr, ['pwd']);
      // Stateless, so introspection cannot vouch for it (RFC 7662 §2.2).
      assert.deepEqual(await oidc.tokenIntrospection(notes.config, tokens.access_token), { active: false });

      const refreshed = await oidc.refreshTokenGrant(notes.config, String(tokens.refresh_token), {
        resource: API,
      });
      const again = await verify(refreshed.access_token);
      assert.equal(again.auth_time, first.auth_time, 'a refresh is no new sign-in');
      assert.deepEqual(again.amr, ['pwd']);
    });
  });
}
