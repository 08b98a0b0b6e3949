import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import eoc from 'express-openid-connect';
import { DIALECTS } from '../helpers/databases.ts';
import { freePort, type Gatehouse, listen, startGatehouse, userAgent, webClient } from './harness.ts';

/*
 * express-openid-connect (Auth0's Express middleware), set up as its README says: `auth()` with
 * `issuerBaseURL`, `baseURL`, `clientID`, `clientSecret`, `secret`, the code flow
 * (`authorizationParams.response_type: 'code'`, which sends PKCE and a nonce) and `idpLogout`
 * for RP-initiated logout; `requiresAuth()`, `req.oidc.user` (the checked ID token's claims),
 * `req.oidc.fetchUserInfo()` and `req.oidc.accessToken.refresh()`. The library has no
 * revocation call. A real Express app on an http loopback address, signed in through its own
 * /login, /callback and /logout routes.
 */

const { auth, requiresAuth } = eoc;

for (const dialect of DIALECTS) {
  describe(`interop: express-openid-connect (${dialect})`, () => {
    let g: Gatehouse;
    let rp: { origin: string; close(): Promise<void> };
    before(async () => {
      g = await startGatehouse(dialect);
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const registered = await g.client(
        webClient('express-openid-connect', origin, '/callback', {
          post_logout_redirect_uris: [`${origin}/signed-out`],
        }),
      );
      const app = express();
      app.use(
        auth({
          issuerBaseURL: g.origin,
          baseURL: origin,
          clientID: registered.client_id,
          clientSecret: registered.client_secret,
          secret: 'a long random string for the session cookie 0123456789',
          authRequired: false,
          idpLogout: true,
          routes: { postLogoutRedirect: '/signed-out' },
          authorizationParams: { response_type: 'code', scope: 'openid profile email' },
        }),
      );
      app.get('/profile', requiresAuth(), async (req, res) => {
        res.json({
          user: req.oidc.user,
          userinfo: await req.oidc.fetchUserInfo(),
          claims: req.oidc.idTokenClaims,
        });
      });
      app.get('/refresh', requiresAuth(), async (req, res) => {
        const previous = req.oidc.refreshToken;
        const token = await req.oidc.accessToken?.refresh();
        const userinfo = await req.oidc.fetchUserInfo();
        res.json({
          rotated: req.oidc.refreshToken !== previous,
          access: Boolean(token?.access_token),
          userinfo,
        });
      });
      app.get('/signed-out', (req, res) => {
        res.json({ signedIn: req.oidc.isAuthenticated() });
      });
      rp = await listen(app, port);
    });
    after(async () => {
      await rp?.close();
      await g?.close();
    });

    it('signs in, checks the ID token, reads userinfo, refreshes and logs out', async () => {
      const p = await g.person();
      const ua = userAgent(g, p);
      // requiresAuth() starts the sign-in and returns to the page asked for.
      const signedIn = await ua.walk(`${rp.origin}/profile`);
      assert.equal(signedIn.url.href, `${rp.origin}/profile`, signedIn.body);
      assert.equal(signedIn.res.status, 200, signedIn.body);
      const profile = JSON.parse(signedIn.body) as {
        user: Record<string, unknown>;
        userinfo: Record<string, unknown>;
        claims: Record<string, unknown>;
      };
      assert.equal(profile.user.sub, p.id);
      assert.equal(profile.user.email, p.email);
      assert.equal(profile.claims.iss, g.origin);
      assert.equal(typeof profile.claims.nonce, 'string', 'the library sent a nonce');
      assert.equal(profile.userinfo.sub, p.id);
      assert.equal(profile.userinfo.name, p.name);

      const refreshed = await ua.walk(`${rp.origin}/refresh`);
      assert.equal(refreshed.res.status, 200, refreshed.body);
      const r = JSON.parse(refreshed.body) as {
        rotated: boolean;
        access: boolean;
        userinfo: { sub: string };
      };
      assert.equal(r.rotated, true, 'the refresh token rotated');
      assert.equal(r.access, true);
      assert.equal(r.userinfo.sub, p.id, 'the new access token reads userinfo');

      const out = await ua.walk(`${rp.origin}/logout`);
      assert.equal(out.url.href, `${rp.origin}/signed-out`, out.body);
      assert.deepEqual(JSON.parse(out.body), { signedIn: false });
      const gone = await ua.go(`${rp.origin}/profile`);
      assert.equal(gone.status, 302, 'signed out of the application');
      // Gatehouse's browser session ended too: the next sign-in shows the sign-in step again.
      assert.deepEqual(ua.prompts, ['login']);
      const again = await ua.walk(`${rp.origin}/profile`);
      assert.equal(again.res.status, 200, again.body);
      assert.deepEqual(ua.prompts, ['login', 'login']);
    });
  });
}
