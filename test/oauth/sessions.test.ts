import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { linkIn, nthMailTo, tokenOfLink } from '../recovery/helpers.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';
import { type OauthStack, startOauthApp } from './support.ts';

/*
 * docs/api.md §17, "Sessions are one": a sign-in into an application is a Gatehouse session, listed
 * with the client's name, and every way a session ends ends the grant: its refresh token is refused,
 * its tokens introspect as inactive, and the browser session no longer allows `prompt=none`.
 * A real relying party (openid-client, code + PKCE); the hosted page's two calls are made by hand.
 */

const REDIRECT = 'http://127.0.0.1:9/cb';
const PASSWORD = 'a long and unguessable passphrase 7';

/** A browser: a cookie jar and fetch that never follows redirects. */
function browser(origin: string) {
  const jar = new Map<string, string>();
  return async (url: string, init: RequestInit = {}) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(new URL(url, origin), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
    });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? '';
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  };
}

interface Person {
  id: string;
  email: string;
  /** The Gatehouse session of the browser's hosted sign-in. */
  access: string;
  go: ReturnType<typeof browser>;
}

for (const dialect of DIALECTS) {
  describe(`oauth sessions are Gatehouse sessions (${dialect})`, () => {
    let s: OauthStack;
    let smtp: SmtpHarness;
    let app: { client_id: string; client_secret: string };
    let config: oidc.Configuration;
    let people = 0;

    const api = async (token: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${s.origin}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    };
    const login = async (email: string, password = PASSWORD) => {
      const res = await fetch(`${s.origin}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      assert.equal(res.status, 200);
      return ((await res.json()) as { access_token: string }).access_token;
    };

    /** A new account, signed in on the hosted pages of a new browser. */
    const person = async (): Promise<Person> => {
      people += 1;
      const email = `person${people}@example.test`;
      const made = await s.admin('POST', '/api/v1/users', { email, password: PASSWORD });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      return { id: String(made.body.id), email, access: await login(email), go: browser(s.origin) };
    };

    /** The authorization request, through the hosted sign-in; the callback's URL (code or error). */
    const authorize = async (p: Person, extra: Record<string, string> = {}) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        ...extra,
      });
      let res = await p.go(url.href);
      for (let hop = 0; hop < 6; hop += 1) {
        const location = res.headers.get('location');
        assert.ok(location, `a redirect (status ${res.status})`);
        if (location.startsWith(REDIRECT)) return { callback: new URL(location), verifier, state };
        const interaction = /\/account\/authorize\/([^/?]+)$/.exec(new URL(location, s.origin).pathname);
        if (interaction) {
          const uid = interaction[1];
          const details = await p.go(`/account/authorize/${uid}/details`);
          const prompt = ((await details.json()) as { prompt: string }).prompt;
          const step = await p.go(`/account/authorize/${uid}/${prompt}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${p.access}`, 'content-type': 'application/json' },
            body: prompt === 'consent' ? JSON.stringify({ allow: true }) : '{}',
          });
          assert.equal(step.status, 200, await step.clone().text());
          res = await p.go(((await step.json()) as { redirect_to: string }).redirect_to);
        } else {
          res = await p.go(location);
        }
      }
      throw new Error('too many redirects');
    };

    /** Signs into the application: its tokens. */
    const signIn = async (p: Person, extra: Record<string, string> = {}) => {
      const { callback, verifier, state } = await authorize(p, extra);
      return oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
    };

    const active = async (token: string) => (await oidc.tokenIntrospection(config, token)).active;

    /** The grant is over: refresh refused, tokens inactive, and prompt=none answers login_required. */
    const assertEnded = async (p: Person, tokens: oidc.TokenEndpointResponse) => {
      assert.equal(await active(tokens.access_token), false, 'the access token introspects inactive');
      assert.equal(
        await active(String(tokens.refresh_token)),
        false,
        'the refresh token introspects inactive',
      );
      await assert.rejects(
        oidc.refreshTokenGrant(config, String(tokens.refresh_token)),
        (err: oidc.ResponseBodyError) => {
          assert.equal(err.error, 'invalid_grant');
          return true;
        },
      );
      const silent = await authorize(p, { prompt: 'none' });
      assert.equal(silent.callback.searchParams.get('error'), 'login_required');
      assert.equal(silent.callback.searchParams.get('code'), null);
    };

    const appSession = async (token: string, path = '/api/v1/sessions') => {
      const list = await api(token, 'GET', path);
      assert.equal(list.status, 200, JSON.stringify(list.body));
      return (
        list.body.data as Array<{ id: string; client: { client_id: string; name: string } | null }>
      ).find((x) => x.client !== null);
    };

    before(async () => {
      smtp = await startSmtpServer();
      s = await startOauthApp(dialect, { SMTP_URL: smtp.url });
      const made = await s.admin('POST', '/api/v1/clients', {
        name: 'Notes',
        application_type: 'native',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'email', 'offline_access'],
        first_party: true,
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      app = made.body as typeof app;
      config = await oidc.discovery(new URL(s.origin), app.client_id, app.client_secret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
    });
    after(async () => {
      await s?.close();
      await smtp?.stop();
    });

    it('a sign-in into an application is a session in the user’s and the admin’s list, naming the client', async () => {
      const p = await person();
      const tokens = await signIn(p);
      assert.equal(await active(String(tokens.refresh_token)), true);
      const own = await appSession(p.access);
      assert.deepEqual(own?.client, { client_id: app.client_id, name: 'Notes' });
      const listed = await appSession(
        await login(ADMIN_EMAIL, ADMIN_PASSWORD),
        `/api/v1/users/${p.id}/sessions`,
      );
      assert.equal(listed?.id, own?.id);
      // Silent sign-in works while nothing ended (the control for the tests below).
      const silent = await authorize(p, { prompt: 'none' });
      assert.ok(silent.callback.searchParams.get('code'));
    });

    it('fragment-response-mode-served: a request for it is refused, never answered with a code', async () => {
      const p = await person();
      const { callback } = await authorize(p, { response_mode: 'fragment' });
      const answer = new URLSearchParams(callback.hash.slice(1) || callback.search.slice(1));
      assert.equal(answer.get('code'), null);
      assert.equal(answer.get('error'), 'invalid_request');
    });

    it('oauth-grant-survives-global-logout', async () => {
      const p = await person();
      const tokens = await signIn(p);
      assert.equal((await api(p.access, 'POST', '/api/v1/logout', { scope: 'global' })).status, 204);
      await assertEnded(p, tokens);
    });

    it('oauth-grant-survives-the-user-revoking-its-session', async () => {
      const p = await person();
      const tokens = await signIn(p);
      const own = await appSession(p.access);
      assert.equal((await api(p.access, 'DELETE', `/api/v1/sessions/${own?.id}`)).status, 204);
      await assertEnded(p, tokens);
      assert.equal(await appSession(p.access), undefined, 'the list no longer shows it');
    });

    it('oauth-grant-survives-admin-session-revocation', async () => {
      const p = await person();
      const tokens = await signIn(p);
      const own = await appSession(p.access);
      const res = await s.admin('DELETE', `/api/v1/users/${p.id}/sessions/${own?.id}`);
      assert.equal(res.status, 204);
      await assertEnded(p, tokens);
    });

    it('oauth-grant-survives-password-change', async () => {
      const p = await person();
      const tokens = await signIn(p);
      const res = await api(p.access, 'PUT', '/api/v1/change-password', {
        current_password: PASSWORD,
        new_password: `${PASSWORD} changed`,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await assertEnded(p, tokens);
    });

    it('oauth-grant-survives-password-reset', async () => {
      const p = await person();
      const tokens = await signIn(p);
      const forgot = await fetch(`${s.origin}/api/v1/password/forgot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: p.email }),
      });
      assert.equal(forgot.status, 202);
      const token = tokenOfLink(
        linkIn(await nthMailTo(smtp, p.email), `${s.origin}/account/reset-password/`),
      );
      const reset = await fetch(`${s.origin}/api/v1/password/reset/${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ password: `${PASSWORD} reset` }),
      });
      assert.equal(reset.status, 200, await reset.clone().text());
      await assertEnded(p, tokens);
    });

    it('oauth-grant-survives-admin-password-set', async () => {
      const p = await person();
      const tokens = await signIn(p);
      const res = await s.admin('PUT', `/api/v1/users/${p.id}`, { password: `${PASSWORD} by admin` });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await assertEnded(p, tokens);
    });

    it('oauth-grant-survives-mfa-reset', async () => {
      const p = await person();
      const tokens = await signIn(p);
      const res = await s.admin('DELETE', `/api/v1/users/${p.id}/mfa`);
      assert.equal(res.status, 204, JSON.stringify(res.body));
      await assertEnded(p, tokens);
    });

    it('oauth-grant-survives-account-disable', async () => {
      const p = await person();
      const tokens = await signIn(p);
      assert.equal((await s.admin('PUT', `/api/v1/users/${p.id}`, { status: 'disabled' })).status, 200);
      await assertEnded(p, tokens);
    });

    it('oauth-grant-survives-account-delete', async () => {
      const p = await person();
      const tokens = await signIn(p);
      assert.equal((await s.admin('DELETE', `/api/v1/users/${p.id}`)).status, 204);
      await assertEnded(p, tokens);
    });

    it('oauth-grant-survives-logout-of-its-browser-session', async () => {
      const p = await person();
      const tokens = await signIn(p);
      assert.equal((await api(p.access, 'POST', '/api/v1/logout', {})).status, 204);
      await assertEnded(p, tokens);
    });

    it('a grant with offline_access outlives a logout of its browser session; a global logout ends it', async () => {
      const p = await person();
      const tokens = await signIn(p, { scope: 'openid email offline_access', prompt: 'consent' });
      assert.equal((await api(p.access, 'POST', '/api/v1/logout', {})).status, 204);
      const next = await oidc.refreshTokenGrant(config, String(tokens.refresh_token));
      assert.equal(await active(String(next.refresh_token)), true);
      p.access = await login(p.email);
      assert.ok(await appSession(p.access), 'still listed');
      assert.equal((await api(p.access, 'POST', '/api/v1/logout', { scope: 'global' })).status, 204);
      assert.equal(await active(String(next.refresh_token)), false);
    });

    it('oauth-grant-survives-connected-app-deletion', async () => {
      const p = await person();
      const tokens = await signIn(p);
      assert.ok(await appSession(p.access));
      assert.equal((await api(p.access, 'DELETE', `/api/v1/grants/${app.client_id}`)).status, 204);
      assert.equal(await appSession(p.access), undefined, 'its session ended');
      assert.equal(await active(String(tokens.refresh_token)), false);
    });

    it('a refresh token revoked by the client (RFC 7009) ends the grant’s session', async () => {
      const p = await person();
      const tokens = await signIn(p);
      assert.ok(await appSession(p.access));
      await oidc.tokenRevocation(config, String(tokens.refresh_token));
      assert.equal(await appSession(p.access), undefined);
    });
  });
}
