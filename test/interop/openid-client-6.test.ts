import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type Gatehouse, type Registered, startGatehouse, userAgent, webClient } from './harness.ts';

/*
 * openid-client 6 (panva), as its README's "Authorization Code Flow" and the functions' docs say:
 * discovery, code + PKCE + nonce, the ID token checked by the library, userinfo, refresh,
 * revocation (RFC 7009) and RP-initiated logout. The application's redirect URI is an http
 * loopback one (a web app in development); the walk stops at it, so nothing listens there.
 */

const APP = 'http://127.0.0.1:4917';

for (const dialect of DIALECTS) {
  describe(`interop: openid-client 6 (${dialect})`, () => {
    let g: Gatehouse;
    let app: Registered;
    before(async () => {
      g = await startGatehouse(dialect);
      app = await g.client(webClient('openid-client 6', APP, '/callback'));
    });
    after(() => g?.close());

    it('signs in, checks the ID token, reads userinfo, refreshes, revokes and logs out', async () => {
      const p = await g.person();
      const ua = userAgent(g, p);
      const config = await oidc.discovery(new URL(g.origin), app.client_id, app.client_secret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
      assert.equal(config.serverMetadata().issuer, g.origin);

      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${APP}/callback`,
        scope: 'openid profile email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      const back = await ua.walk(url, {}, (u) => u.href.startsWith(`${APP}/callback`));
      const tokens = await oidc.authorizationCodeGrant(config, back.url, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      assert.ok(claims);
      assert.equal(claims.sub, p.id);
      assert.equal(claims.iss, g.origin);
      assert.equal(claims.aud, app.client_id);
      assert.equal(claims.nonce, nonce);
      assert.equal(claims.email, p.email);
      assert.ok(tokens.refresh_token, 'a first-party client gets a refresh token');

      const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      assert.equal(info.sub, p.id);
      assert.equal(info.email, p.email);
      assert.equal(info.name, p.name);

      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token);
      assert.ok(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token, 'rotated');
      assert.equal(refreshed.claims()?.sub, p.id);
      const again = await oidc.fetchUserInfo(config, refreshed.access_token, p.id);
      assert.equal(again.email, p.email);

      await oidc.tokenRevocation(config, refreshed.refresh_token, { token_type_hint: 'refresh_token' });
      await assert.rejects(
        oidc.refreshTokenGrant(config, refreshed.refresh_token),
        (err: oidc.ResponseBodyError) => {
          assert.equal(err.error, 'invalid_grant');
          return true;
        },
      );

      // A second sign-in (the browser session is still there: no sign-in asked), then logout.
      const second = oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${APP}/callback`,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      });
      const back2 = await ua.walk(second, {}, (u) => u.href.startsWith(`${APP}/callback`));
      const tokens2 = await oidc.authorizationCodeGrant(config, back2.url, {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
      const logout = oidc.buildEndSessionUrl(config, {
        id_token_hint: String(tokens2.id_token),
        post_logout_redirect_uri: `${APP}/signed-out`,
        state: 'bye',
      });
      const out = await ua.walk(logout, {}, (u) => u.href.startsWith(`${APP}/signed-out`));
      assert.equal(out.url.href, `${APP}/signed-out?state=bye`);
      const silent = oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${APP}/callback`,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        prompt: 'none',
      });
      const none = await ua.walk(silent, {}, (u) => u.href.startsWith(`${APP}/callback`));
      assert.equal(
        none.url.searchParams.get('error'),
        'login_required',
        'the logout ended the browser session',
      );
    });
  });
}
