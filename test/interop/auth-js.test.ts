import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ExpressAuth, type ExpressAuthConfig, getSession } from '@auth/express';
import express from 'express';
import { DIALECTS } from '../helpers/databases.ts';
import { freePort, type Gatehouse, listen, startGatehouse, userAgent, webClient } from './harness.ts';

/*
 * Auth.js for Express (`@auth/express`), set up as its docs say for an OpenID Connect provider of
 * one's own: `{ id, name, type: 'oidc', issuer, clientId, clientSecret }` with
 * `checks: ['pkce', 'state', 'nonce']` and `idToken: false` (so the profile comes from userinfo,
 * after the ID token is checked: Gatehouse's ID token carries `email` and `profile` claims too,
 * but this path proves userinfo), `trustHost` for a development host, the JWT session, and the
 * library's own routes: GET /auth/csrf, POST /auth/signin/gatehouse, /auth/callback/gatehouse,
 * POST /auth/signout. Auth.js has no refresh or revocation call of its own (its guide's token
 * rotation is the app's code) and its sign-out is local.
 */

for (const dialect of DIALECTS) {
  describe(`interop: Auth.js, @auth/express (${dialect})`, () => {
    let g: Gatehouse;
    let rp: { origin: string; close(): Promise<void> };
    before(async () => {
      g = await startGatehouse(dialect);
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const registered = await g.client(webClient('Auth.js', origin, '/auth/callback/gatehouse'));
      const config: ExpressAuthConfig = {
        secret: 'a long random string for the session cookie 0123456789',
        trustHost: true,
        providers: [
          {
            id: 'gatehouse',
            name: 'Gatehouse',
            type: 'oidc',
            issuer: g.origin,
            clientId: registered.client_id,
            clientSecret: String(registered.client_secret),
            checks: ['pkce', 'state', 'nonce'],
            idToken: false,
            authorization: { params: { scope: 'openid profile email' } },
          },
        ],
        callbacks: {
          jwt({ token, account, profile }) {
            if (account && profile) {
              token.sub = String(profile.sub);
              token.idToken = account.id_token;
              token.issuer = g.origin;
            }
            return token;
          },
          session({ session, token }) {
            return { ...session, sub: token.sub, hasIdToken: typeof token.idToken === 'string' };
          },
        },
      };
      const app = express();
      app.set('trust proxy', true);
      // Express 5's paths have no bare `*`: a pattern whose first group is the part after /auth/, as the
      // library's base path reads it (req.params[0]).
      app.use(/^\/auth\/(.*)$/, ExpressAuth(config));
      app.get('/me', async (req, res) => {
        res.json(await getSession(req, config));
      });
      rp = await listen(app, port);
    });
    after(async () => {
      await rp?.close();
      await g?.close();
    });

    it('signs in (the ID token checked, the profile from userinfo) and signs out', async () => {
      const p = await g.person();
      const ua = userAgent(g, p);
      const csrf = async () =>
        ((await (await ua.go(`${rp.origin}/auth/csrf`)).json()) as { csrfToken: string }).csrfToken;
      const signedIn = await ua.walk(`${rp.origin}/auth/signin/gatehouse`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrfToken: await csrf(), callbackUrl: `${rp.origin}/me` }).toString(),
      });
      assert.equal(signedIn.url.href, `${rp.origin}/me`, signedIn.body);
      const session = JSON.parse(signedIn.body) as {
        user: { name: string; email: string };
        sub: string;
        hasIdToken: boolean;
      };
      assert.equal(session.sub, p.id);
      assert.equal(session.user.email, p.email);
      assert.equal(session.user.name, p.name, 'from userinfo');
      assert.equal(session.hasIdToken, true);

      const out = await ua.walk(`${rp.origin}/auth/signout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrfToken: await csrf(), callbackUrl: `${rp.origin}/me` }).toString(),
      });
      assert.equal(out.url.href, `${rp.origin}/me`);
      assert.equal(out.body, 'null', 'no session');
    });
  });
}
