import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import type { TestDialect } from '../helpers/databases.ts';
import { type Browser, cookieBrowser } from '../support/cookie-browser.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';
import { type OauthStack, startOauthApp } from './support.ts';

/*
 * The code flow with a real relying party (openid-client, code + PKCE) for tests of sign-ins into
 * applications: a first-party client "Notes", people signed in on the hosted pages of their own
 * browser (a cookie jar), and the hosted page's two calls made by hand.
 */

export const REDIRECT = 'http://127.0.0.1:9/cb';
export const PASSWORD = 'a long and unguessable passphrase 7';

export interface Person {
  id: string;
  email: string;
  /** The Gatehouse session of the browser's hosted sign-in. */
  access: string;
  go: Browser;
}

/** A running app with the client "Notes" and the steps of its code flow. */
export async function startCodeFlow(dialect: TestDialect, env: Record<string, string> = {}) {
  const smtp: SmtpHarness = await startSmtpServer();
  let s: OauthStack;
  try {
    s = await startOauthApp(dialect, { SMTP_URL: smtp.url, ...env });
  } catch (err) {
    await smtp.stop();
    throw err;
  }
  let people = 0;
  /** A client of this app (native, redirecting to REDIRECT) and its relying-party configuration. */
  const client = async (name: string, extra: Record<string, unknown> = {}) => {
    const made = await s.admin('POST', '/api/v1/clients', {
      name,
      application_type: 'native',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'email', 'offline_access'],
      ...extra,
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const registered = made.body as { client_id: string; client_secret: string };
    const rp = await oidc.discovery(
      new URL(s.origin),
      registered.client_id,
      registered.client_secret,
      undefined,
      { execute: [oidc.allowInsecureRequests] },
    );
    return { app: registered, config: rp };
  };
  const { app, config } = await client('Notes', { first_party: true });
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
    return { id: String(made.body.id), email, access: await login(email), go: cookieBrowser(s.origin) };
  };

  /**
   * The authorization request, through the hosted sign-in; the callback's URL (code or error).
   * `pkce: false` leaves PKCE out, as a client registered with `pkce_required: false` may.
   */
  const authorize = async (p: Person, extra: Record<string, string> = {}, rp = config, pkce = true) => {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(rp, {
      redirect_uri: REDIRECT,
      scope: 'openid email',
      ...(pkce
        ? { code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }
        : {}),
      state,
      ...extra,
    });
    let res = await p.go(url.href);
    for (let hop = 0; hop < 6; hop += 1) {
      const location = res.headers.get('location');
      assert.ok(location, `a redirect (status ${res.status})`);
      if (location.startsWith(extra.redirect_uri ?? REDIRECT))
        return { callback: new URL(location), verifier, state };
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
  const signIn = async (p: Person, extra: Record<string, string> = {}, rp = config) => {
    const { callback, verifier, state } = await authorize(p, extra, rp);
    return oidc.authorizationCodeGrant(rp, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
  };

  const active = async (token: string) => (await oidc.tokenIntrospection(config, token)).active;

  /** The grant is over: refresh refused, tokens inactive, and prompt=none answers login_required. */
  const assertEnded = async (p: Person, tokens: oidc.TokenEndpointResponse) => {
    assert.equal(await active(tokens.access_token), false, 'the access token introspects inactive');
    assert.equal(await active(String(tokens.refresh_token)), false, 'the refresh token introspects inactive');
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
    return (list.body.data as Array<{ id: string; client: { client_id: string; name: string } | null }>).find(
      (x) => x.client !== null,
    );
  };

  const close = async () => {
    await s.close();
    await smtp.stop();
  };
  return {
    s,
    smtp,
    app,
    config,
    client,
    api,
    login,
    person,
    authorize,
    signIn,
    active,
    assertEnded,
    appSession,
    close,
  };
}

export type CodeFlow = Awaited<ReturnType<typeof startCodeFlow>>;
