import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { Strategy as OpenIDConnectStrategy } from 'passport-openidconnect';
import { DIALECTS } from '../helpers/databases.ts';
import { freePort, type Gatehouse, listen, startGatehouse, userAgent, webClient } from './harness.ts';

/*
 * passport-openidconnect 0.1 (Passport's OpenID Connect strategy), set up as its README says:
 * the strategy with `issuer`, the three endpoint URLs, `clientID`, `clientSecret`, `callbackURL`
 * and `scope`, an express-session, `passport.authenticate('openidconnect')` on /login and
 * /oauth2/redirect. It sends no PKCE, so the client is registered with `pkce_required: false`
 * (admin-only, docs/api.md §17), which makes Gatehouse require a `nonce`: the strategy's `nonce:
 * true`. The strategy checks the ID token's iss, aud, azp, exp and nonce but not its signature (it
 * trusts the token endpoint's TLS), reads userinfo into the profile, and has no refresh,
 * revocation or RP-initiated logout: the app's logout is Passport's local `req.logout`.
 */

for (const dialect of DIALECTS) {
  describe(`interop: passport-openidconnect (${dialect})`, () => {
    let g: Gatehouse;
    let rp: { origin: string; close(): Promise<void> };
    let clientId: string;
    before(async () => {
      g = await startGatehouse(dialect);
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const registered = await g.client(
        webClient('passport-openidconnect', origin, '/oauth2/redirect', { pkce_required: false }),
      );
      clientId = registered.client_id;
      const strategy = new OpenIDConnectStrategy(
        {
          issuer: g.origin,
          authorizationURL: `${g.origin}/oauth2/authorize`,
          tokenURL: `${g.origin}/oauth2/token`,
          userInfoURL: `${g.origin}/oauth2/userinfo`,
          clientID: registered.client_id,
          clientSecret: String(registered.client_secret),
          callbackURL: `${origin}/oauth2/redirect`,
          scope: ['profile', 'email'],
          nonce: true,
        },
        (
          issuer: string,
          uiProfile: Record<string, unknown>,
          idProfile: Record<string, unknown>,
          context: unknown,
          idToken: string,
          accessToken: string,
          refreshToken: string,
          params: Record<string, unknown>,
          done: (err: unknown, user?: unknown) => void,
        ) => {
          void context;
          void params;
          done(null, {
            issuer,
            id: uiProfile.id,
            idTokenSub: idProfile.id,
            displayName: uiProfile.displayName,
            emails: uiProfile.emails,
            hasTokens: Boolean(idToken && accessToken && refreshToken),
          });
        },
      );
      passport.use(strategy);
      passport.serializeUser((user, done) => done(null, user));
      passport.deserializeUser((user: Express.User, done) => done(null, user));
      const app = express();
      app.use(
        session({
          secret: 'a long random string for the session cookie',
          resave: false,
          saveUninitialized: false,
        }),
      );
      app.use(passport.authenticate('session'));
      app.get('/login', passport.authenticate('openidconnect'));
      app.get(
        '/oauth2/redirect',
        passport.authenticate('openidconnect', {
          successRedirect: '/me',
          failureRedirect: '/failed',
          failureMessage: true,
        }),
      );
      app.get('/me', (req, res) => {
        res.json({ user: req.user ?? null });
      });
      app.get('/failed', (req, res) => {
        res
          .status(401)
          .json({ messages: (req.session as unknown as { messages?: string[] }).messages ?? [] });
      });
      app.post('/logout', (req, res, next) => {
        req.logout((err) => (err ? next(err) : res.redirect('/me')));
      });
      rp = await listen(app, port);
    });
    after(async () => {
      await rp?.close();
      await g?.close();
    });

    it('signs in without PKCE, with a nonce; the profile from userinfo; logs out of the app', async () => {
      const p = await g.person();
      const ua = userAgent(g, p);
      const signedIn = await ua.walk(`${rp.origin}/login`);
      assert.equal(signedIn.url.href, `${rp.origin}/me`, signedIn.body);
      const { user } = JSON.parse(signedIn.body) as { user: Record<string, unknown> };
      assert.deepEqual(user, {
        issuer: g.origin,
        id: p.id,
        idTokenSub: p.id,
        displayName: p.name,
        emails: [{ value: p.email }],
        hasTokens: true,
      });
      const out = await ua.walk(`${rp.origin}/logout`, { method: 'POST' });
      assert.deepEqual(JSON.parse(out.body), { user: null });
    });

    it('the same client without a nonce is refused: pkce_required false requires one', async () => {
      const url = new URL(`${g.origin}/oauth2/authorize`);
      url.search = new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: `${rp.origin}/oauth2/redirect`,
        state: 'st',
      }).toString();
      const res = await fetch(url, { redirect: 'manual' });
      const location = new URL(String(res.headers.get('location')));
      assert.equal(location.searchParams.get('error'), 'invalid_request');
    });
  });
}
