import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import type { BrowserContext, Frame, Page, Request } from 'playwright-core';
import { type Stack, type Tab, totp } from './harness.ts';

/**
 * The relying parties' addresses, never reached: a direct navigation there is answered inside the
 * browser (context.route); the server's redirect there ends on Chromium's error page. The tests read
 * the URL.
 */
export const APP = 'https://wiki.example.test';
export const CALLBACK = `${APP}/callback`;
export const NATIVE_CALLBACK = 'http://127.0.0.1:9/callback';

export interface Registered {
  client_id: string;
  client_secret: string;
}

/** Registers a client through the admin API (docs/api.md §17 clients.create). */
export async function registerClient(stack: Stack, body: Record<string, unknown>): Promise<Registered> {
  const res = await stack.adminApi('POST', '/api/v1/clients', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as Registered;
}

/** openid-client's configuration for a confidential client, from Gatehouse's discovery document. */
export function relyingParty(stack: Stack, c: Registered): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(stack.origin), c.client_id, c.client_secret, undefined, {
    execute: [oidc.allowInsecureRequests],
  });
}

/** openid-client's configuration for a public (native) client: no secret, PKCE only. */
export function publicRelyingParty(stack: Stack, c: Registered): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(stack.origin), c.client_id, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
}

const isApplication = (url: string) => url.startsWith(APP) || url.startsWith(NATIVE_CALLBACK);

/**
 * Sends the browser to the authorization URL, runs `steps` on the page (sign-in, consent), and
 * resolves with the URL the application got back, once the page has left for it (so the page's next
 * navigation does not race that one). The page is a new one of `context` unless one is given
 * (a page with a virtual authenticator, say).
 */
export async function authorize(
  context: BrowserContext,
  url: URL,
  steps: (page: Page) => Promise<void> = async () => {},
  page?: Page,
): Promise<URL> {
  for (const pattern of [`${APP}/**`, `${NATIVE_CALLBACK}**`]) {
    await context.route(pattern, (route) =>
      route.fulfill({ status: 200, contentType: 'text/plain', body: 'application' }),
    );
  }
  const back = new Promise<URL>((resolve) => {
    const seen = (request: Request) => {
      if (!isApplication(request.url())) return;
      context.off('request', seen);
      resolve(new URL(request.url()));
    };
    context.on('request', seen);
  });
  const target = page ?? (await context.newPage());
  // The server's redirect to the application is not routed (Playwright does not intercept the target
  // of a redirect): the name does not resolve and Chromium shows its error page. Waiting for that
  // page keeps the next navigation of this page from being interrupted by it.
  const settled = new Promise<void>((resolve) => {
    const onNavigated = (frame: Frame) => {
      if (frame !== target.mainFrame()) return;
      if (!frame.url().startsWith('chrome-error:') && !isApplication(frame.url())) return;
      target.off('framenavigated', onNavigated);
      resolve();
    };
    target.on('framenavigated', onNavigated);
  });
  // A redirect straight to the application ends the navigation elsewhere: not a failure here.
  await target.goto(url.href).catch(() => {});
  await steps(target);
  const landed = await back;
  await Promise.race([
    settled,
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error('the page did not leave for the application')), 15_000).unref(),
    ),
  ]);
  return landed;
}

/** An authorization request built by openid-client: PKCE S256, state and nonce. */
export async function authRequest(config: oidc.Configuration, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  return { url, verifier, state, nonce };
}

/** The code exchange of what `authorize` brought back, checked by openid-client (state, nonce, PKCE). */
export function exchange(
  config: oidc.Configuration,
  back: URL,
  r: { verifier: string; state: string; nonce: string },
) {
  return oidc.authorizationCodeGrant(config, back, {
    pkceCodeVerifier: r.verifier,
    expectedState: r.state,
    expectedNonce: r.nonce,
  });
}

/** The hosted sign-in page's password step, reached from the authorization request. */
export const signInAs = (email: string, password: string) => async (page: Page) => {
  await page.waitForURL(/\/account\/sign-in\?next=/);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
};

/**
 * RP-initiated logout (RP-Initiated Logout 1.0) in the tab's page: Gatehouse's own confirmation page, then
 * the registered `post_logout_redirect_uri`. Resolves with the URL the browser was sent to.
 */
export async function logOutAtProvider(
  tab: Tab,
  config: oidc.Configuration,
  idToken: string,
): Promise<string> {
  const { context, page } = tab;
  const bye = new Promise<string>((resolve) => {
    context.on('request', (request) => {
      if (request.url().startsWith(`${APP}/bye`)) resolve(request.url());
    });
  });
  await context.route(`${APP}/**`, (route) => route.fulfill({ status: 200, body: 'bye' }));
  const logoutUrl = oidc.buildEndSessionUrl(config, {
    id_token_hint: idToken,
    post_logout_redirect_uri: `${APP}/bye`,
  });
  await page.goto(logoutUrl.href);
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  // An unreferenced timer: a pending one would keep the test process alive after the last test.
  return Promise.race([
    bye,
    new Promise<string>((r) => setTimeout(() => r('about:timeout'), 20_000).unref()),
  ]);
}

/** Turns on TOTP for an account through the API (docs/api.md §13); returns its base32 secret. */
export async function enrolTotp(stack: Stack, email: string, password: string): Promise<string> {
  const login = await fetch(`${stack.origin}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  assert.equal(login.status, 200);
  const { access_token } = (await login.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' };
  const enrol = await fetch(`${stack.origin}/api/v1/mfa/totp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ current_password: password }),
  });
  assert.equal(enrol.status, 200, await enrol.clone().text());
  const { secret } = (await enrol.json()) as { secret: string };
  const confirm = await fetch(`${stack.origin}/api/v1/mfa/totp/confirm`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ code: totp(secret) }),
  });
  assert.equal(confirm.status, 200, await confirm.text());
  return secret;
}

/** The `amr` of each live session of an account (admin API, docs/api.md §13), as `pwd otp` and the like. */
export async function sessionAmrs(stack: Stack, userId: string): Promise<string[]> {
  const res = await stack.adminApi('GET', `/api/v1/users/${userId}/sessions`);
  assert.equal(res.status, 200);
  return (res.body as { data: Array<{ amr: string[] }> }).data.map((x) => x.amr.join(' '));
}
