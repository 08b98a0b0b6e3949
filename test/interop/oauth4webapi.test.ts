import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { DIALECTS } from '../helpers/databases.ts';
import { type Gatehouse, type Registered, startGatehouse, userAgent, webClient } from './harness.ts';

/*
 * oauth4webapi (panva; what openid-client 6 is built on, and what Auth.js uses), as its "Code
 * Flow" example says: discovery, code + PKCE + nonce, `processAuthorizationCodeResponse` (which
 * checks the ID token), userinfo with the expected `sub`, refresh, revocation and the logout URL.
 * `allowInsecureRequests` only because the test's issuer is http.
 */

const APP = 'http://127.0.0.1:4916';

for (const dialect of DIALECTS) {
  describe(`interop: oauth4webapi (${dialect})`, () => {
    let g: Gatehouse;
    let app: Registered;
    before(async () => {
      g = await startGatehouse(dialect);
      app = await g.client(webClient('oauth4webapi', APP, '/callback'));
    });
    after(() => g?.close());

    it('signs in, checks the ID token, reads userinfo, refreshes, revokes and logs out', async () => {
      const p = await g.person();
      const ua = userAgent(g, p);
      const issuer = new URL(g.origin);
      const insecure = { [oauth.allowInsecureRequests]: true };
      const as = await oauth
        .discoveryRequest(issuer, { algorithm: 'oidc', ...insecure })
        .then((res) => oauth.processDiscoveryResponse(issuer, res));
      const client: oauth.Client = { client_id: app.client_id };
      const auth = oauth.ClientSecretBasic(String(app.client_secret));
      const redirect = `${APP}/callback`;

      const verifier = oauth.generateRandomCodeVerifier();
      const nonce = oauth.generateRandomNonce();
      const url = new URL(String(as.authorization_endpoint));
      url.searchParams.set('client_id', client.client_id);
      url.searchParams.set('redirect_uri', redirect);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('scope', 'openid profile email');
      url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
      url.searchParams.set('code_challenge_method', 'S256');
      url.searchParams.set('nonce', nonce);
      const back = await ua.walk(url, {}, (u) => u.href.startsWith(redirect));

      const params = oauth.validateAuthResponse(as, client, back.url);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        redirect,
        verifier,
        insecure,
      );
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: nonce,
        requireIdToken: true,
      });
      const claims = oauth.getValidatedIdTokenClaims(tokens);
      assert.ok(claims);
      assert.equal(claims.sub, p.id);
      assert.equal(claims.iss, g.origin);
      assert.equal(claims.aud, app.client_id);
      assert.equal(claims.email, p.email);
      assert.ok(tokens.refresh_token, 'a first-party client gets a refresh token');

      const info = await oauth.processUserInfoResponse(
        as,
        client,
        p.id,
        await oauth.userInfoRequest(as, client, tokens.access_token, insecure),
      );
      assert.equal(info.email, p.email);
      assert.equal(info.name, p.name);

      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token, insecure),
      );
      assert.ok(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token, 'rotated');

      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, auth, refreshed.refresh_token, {
          ...insecure,
          additionalParameters: { token_type_hint: 'refresh_token' },
        }),
      );
      await assert.rejects(
        oauth
          .refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token, insecure)
          .then((res) => oauth.processRefreshTokenResponse(as, client, res)),
        (err: unknown) => {
          assert.ok(err instanceof oauth.ResponseBodyError);
          assert.equal(err.error, 'invalid_grant');
          return true;
        },
      );

      const logout = new URL(String(as.end_session_endpoint));
      logout.searchParams.set('id_token_hint', String(tokens.id_token));
      logout.searchParams.set('post_logout_redirect_uri', `${APP}/signed-out`);
      logout.searchParams.set('state', 'bye');
      const out = await ua.walk(logout, {}, (u) => u.href.startsWith(`${APP}/signed-out`));
      assert.equal(out.url.href, `${APP}/signed-out?state=bye`);
    });
  });
}
