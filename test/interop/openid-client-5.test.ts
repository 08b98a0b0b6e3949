import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errors, generators, Issuer } from 'openid-client-5';
import { DIALECTS } from '../helpers/databases.ts';
import { type Gatehouse, type Registered, startGatehouse, userAgent, webClient } from './harness.ts';

/*
 * openid-client 5 (still the most installed major), as its README says: `Issuer.discover`, a
 * `Client`, `authorizationUrl` with PKCE and a nonce, `callback` (which checks the ID token),
 * `userinfo`, `refresh`, `revoke` and `endSessionUrl`. Installed as the npm alias
 * `openid-client-5` beside version 6.
 */

const APP = 'http://127.0.0.1:4915';

for (const dialect of DIALECTS) {
  describe(`interop: openid-client 5 (${dialect})`, () => {
    let g: Gatehouse;
    let app: Registered;
    before(async () => {
      g = await startGatehouse(dialect);
      app = await g.client(webClient('openid-client 5', APP, '/callback'));
    });
    after(() => g?.close());

    it('signs in, checks the ID token, reads userinfo, refreshes, revokes and logs out', async () => {
      const p = await g.person();
      const ua = userAgent(g, p);
      const issuer = await Issuer.discover(g.origin);
      assert.equal(issuer.metadata.issuer, g.origin);
      const client = new issuer.Client({
        client_id: app.client_id,
        client_secret: String(app.client_secret),
        redirect_uris: [`${APP}/callback`],
        post_logout_redirect_uris: [`${APP}/signed-out`],
        response_types: ['code'],
      });

      const verifier = generators.codeVerifier();
      const state = generators.state();
      const nonce = generators.nonce();
      const url = client.authorizationUrl({
        scope: 'openid profile email',
        code_challenge: generators.codeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      const back = await ua.walk(url, {}, (u) => u.href.startsWith(`${APP}/callback`));
      const params = client.callbackParams(back.url.href);
      const tokens = await client.callback(`${APP}/callback`, params, {
        code_verifier: verifier,
        state,
        nonce,
      });
      const claims = tokens.claims();
      assert.equal(claims.sub, p.id);
      assert.equal(claims.iss, g.origin);
      assert.equal(claims.aud, app.client_id);
      assert.equal(claims.email, p.email);
      assert.ok(tokens.refresh_token, 'a first-party client gets a refresh token');

      const info = await client.userinfo(tokens);
      assert.equal(info.sub, p.id);
      assert.equal(info.email, p.email);
      assert.equal(info.name, p.name);

      const refreshed = await client.refresh(tokens);
      assert.ok(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token, 'rotated');
      assert.equal(refreshed.claims().sub, p.id);
      assert.equal((await client.userinfo(refreshed)).email, p.email);

      await client.revoke(String(refreshed.refresh_token), 'refresh_token');
      await assert.rejects(client.refresh(String(refreshed.refresh_token)), (err: unknown) => {
        assert.ok(err instanceof errors.OPError);
        assert.equal(err.error, 'invalid_grant');
        return true;
      });

      // Sign in again (the browser session is still there), then RP-initiated logout.
      const again = await ua.walk(
        client.authorizationUrl({
          scope: 'openid',
          code_challenge: generators.codeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
        }),
        {},
        (u) => u.href.startsWith(`${APP}/callback`),
      );
      const tokens2 = await client.callback(`${APP}/callback`, client.callbackParams(again.url.href), {
        code_verifier: verifier,
        state,
      });
      const logout = client.endSessionUrl({
        id_token_hint: tokens2,
        post_logout_redirect_uri: `${APP}/signed-out`,
        state: 'bye',
      });
      const out = await ua.walk(logout, {}, (u) => u.href.startsWith(`${APP}/signed-out`));
      assert.equal(out.url.href, `${APP}/signed-out?state=bye`);
    });
  });
}
