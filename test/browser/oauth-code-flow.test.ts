import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import type { BrowserContext } from 'playwright-core';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

const APP = 'https://wiki.example.test';
const CALLBACK = `${APP}/callback`;
const NATIVE_CALLBACK = 'http://127.0.0.1:9/callback';

interface Registered {
  client_id: string;
  client_secret: string;
}

/**
 * docs/api.md §17 through a real browser and a real relying party: openid-client builds the
 * authorization request (PKCE S256, state, nonce), Chromium signs in on the hosted pages and
 * consents, and openid-client exchanges the code, refreshes and logs out.
 */
describe('oauth authorization code flow in Chromium with openid-client', {
  skip: skipWithoutChromium,
}, () => {
  let stack: Stack;
  let wiki: Registered;
  let tools: Registered;
  let other: Registered;
  let cli: Registered;
  let ownCli: Registered;

  const register = async (body: Record<string, unknown>) => {
    const res = await stack.adminApi('POST', '/api/v1/clients', body);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as Registered;
  };
  const rp = (c: Registered) =>
    oidc.discovery(new URL(stack.origin), c.client_id, c.client_secret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });

  /** Sends the browser to the authorization URL; resolves with the URL the application got back. */
  async function authorize(
    context: BrowserContext,
    url: URL,
    steps: (page: import('playwright-core').Page) => Promise<void> = async () => {},
  ) {
    return new Promise<URL>((resolve, reject) => {
      const seen = (request: import('playwright-core').Request) => {
        if (!request.url().startsWith(APP) && !request.url().startsWith(NATIVE_CALLBACK)) return;
        context.off('request', seen);
        resolve(new URL(request.url()));
      };
      context.on('request', seen);
      void (async () => {
        for (const pattern of [`${APP}/**`, `${NATIVE_CALLBACK}**`]) {
          await context.route(pattern, (route) =>
            route.fulfill({ status: 200, contentType: 'text/plain', body: 'application' }),
          );
        }
        const page = await context.newPage();
        // A redirect straight to the application ends the navigation elsewhere: not a failure here.
        await page.goto(url.href).catch(() => {});
        await steps(page);
      })().catch(reject);
    });
  }

  async function request(config: oidc.Configuration, extra: Record<string, string> = {}) {
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

  const signInAs = (email: string, password: string) => async (page: import('playwright-core').Page) => {
    await page.waitForURL(/\/account\/sign-in\?next=/);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  };
  const signIn = signInAs(ADMIN_EMAIL, ADMIN_PASSWORD);

  before(async () => {
    stack = await startStack();
    wiki = await register({
      name: 'Team Wiki',
      redirect_uris: [CALLBACK],
      post_logout_redirect_uris: [`${APP}/bye`],
    });
    tools = await register({ name: 'Tools', redirect_uris: [CALLBACK], first_party: true });
    other = await register({ name: 'Other App', redirect_uris: [CALLBACK] });
    cli = await register({
      name: 'Desktop',
      type: 'public',
      application_type: 'native',
      redirect_uris: [NATIVE_CALLBACK],
    });
    ownCli = await register({
      name: 'Our desktop app',
      type: 'public',
      application_type: 'native',
      redirect_uris: [NATIVE_CALLBACK],
      first_party: true,
    });
  });
  after(async () => {
    await stack?.close();
  });

  it('signs in on the hosted page, asks consent in plain words, and the code exchange (PKCE) gives ID token and userinfo', async () => {
    const tab = await openTab(stack);
    const config = await rp(wiki);
    const r = await request(config);
    const back = await authorize(tab.context, r.url, async (page) => {
      await signIn(page);
      await page.getByRole('heading', { name: /Team Wiki asks for access/ }).waitFor();
      await page.getByText('See your e-mail address').waitFor();
      await page.getByRole('button', { name: 'Allow' }).click();
    });
    assert.equal(back.searchParams.get('state'), r.state);
    const tokens = await oidc.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: r.verifier,
      expectedState: r.state,
      expectedNonce: r.nonce,
    });
    const claims = tokens.claims();
    assert.ok(claims);
    assert.equal(claims.email, ADMIN_EMAIL);
    assert.equal(claims.iss, stack.origin);
    assert.equal(typeof claims.auth_time, 'number');
    assert.equal(tokens.refresh_token, undefined, 'a third-party client without offline_access gets none');
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    assert.equal(info.email, ADMIN_EMAIL);

    // The consent is stored per (user, client): prompt=none now answers with a code, silently.
    const silent = await request(config, { prompt: 'none' });
    const again = await authorize(tab.context, silent.url);
    assert.ok(again.searchParams.get('code'), again.href);

    // A third-party native client is asked every time (RFC 8252 §8.6): prompt=none cannot proceed.
    const nativeConfig = await oidc.discovery(new URL(stack.origin), cli.client_id, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    const nativeRequest = await request(nativeConfig, { prompt: 'none', redirect_uri: NATIVE_CALLBACK });
    const nativeBack = await authorize(tab.context, nativeRequest.url);
    assert.equal(nativeBack.searchParams.get('error'), 'interaction_required');
    // …but a first-party native client never sees consent: prompt=none goes straight through.
    const ownConfig = await oidc.discovery(new URL(stack.origin), ownCli.client_id, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    const ownRequest = await request(ownConfig, { prompt: 'none', redirect_uri: NATIVE_CALLBACK });
    const ownBack = await authorize(tab.context, ownRequest.url);
    assert.ok(ownBack.searchParams.get('code'), ownBack.href);

    // Connected apps: the consent is listed; revoking it ends the app's tokens at once.
    const apps = await stack.adminApi('GET', '/api/v1/grants');
    const listed = (apps.body as { data: Array<{ client_id: string; name: string; scopes: string[] }> }).data;
    const entry = listed.find((a) => a.client_id === wiki.client_id);
    assert.equal(entry?.name, 'Team Wiki');
    assert.deepEqual([...(entry?.scopes ?? [])].sort(), ['email', 'openid', 'profile']);
    assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, true);
    // Revoked from the connected apps of /account.
    const account = await tab.context.newPage();
    await account.goto(`${stack.origin}/account`);
    await account.getByRole('heading', { name: 'Connected apps' }).waitFor();
    await account.getByRole('button', { name: 'Remove access of Team Wiki' }).click();
    await account.getByText('Team Wiki no longer has access to your account.').waitFor();
    await account.close();
    assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, false);
    assert.equal((await stack.adminApi('DELETE', `/api/v1/grants/${wiki.client_id}`)).status, 404);

    // RP-initiated logout: Gatehouse's own confirmation page, then the registered URI.
    const bye = new Promise<string>((resolve) => {
      tab.context.on('request', (request) => {
        if (request.url().startsWith(`${APP}/bye`)) resolve(request.url());
      });
    });
    await tab.context.route(`${APP}/**`, (route) => route.fulfill({ status: 200, body: 'bye' }));
    const logoutUrl = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: `${APP}/bye`,
    });
    await tab.page.goto(logoutUrl.href);
    await tab.page.getByRole('button', { name: 'Yes, sign me out' }).click();
    const landedAt = await Promise.race([
      bye,
      new Promise<string>((r) => setTimeout(() => r('about:timeout'), 20_000)),
    ]);
    assert.equal(landedAt.startsWith(`${APP}/bye`), true, landedAt);
    await tab.context.close();
  });

  it('a fresh browser with prompt=none gets login_required', async () => {
    const tab = await openTab(stack);
    const config = await rp(wiki);
    const r = await request(config, { prompt: 'none' });
    const back = await authorize(tab.context, r.url);
    assert.equal(back.searchParams.get('error'), 'login_required');
    await tab.context.close();
  });

  it('denying consent answers access_denied', async () => {
    const tab = await openTab(stack);
    const r = await request(await rp(other));
    const back = await authorize(tab.context, r.url, async (page) => {
      await signIn(page);
      await page.getByRole('button', { name: 'Deny' }).click();
    });
    assert.equal(back.searchParams.get('error'), 'access_denied');
    await tab.context.close();
  });

  it('a first-party client sees no consent, gets a refresh token, and a reused refresh token revokes the grant', async () => {
    const tab = await openTab(stack);
    const config = await rp(tools);
    const r = await request(config, { prompt: 'consent' });
    const back = await authorize(tab.context, r.url, signIn);
    const tokens = await oidc.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: r.verifier,
      expectedState: r.state,
      expectedNonce: r.nonce,
    });
    assert.ok(tokens.refresh_token, 'first-party clients with the refresh_token grant get one');
    const first = tokens.refresh_token as string;
    const rotated = await oidc.refreshTokenGrant(config, first);
    assert.ok(rotated.refresh_token);
    assert.notEqual(rotated.refresh_token, first, 'rotated on use');
    await assert.rejects(
      oidc.refreshTokenGrant(config, first),
      (err: oidc.ResponseBodyError) => err.error === 'invalid_grant',
    );
    await assert.rejects(
      oidc.refreshTokenGrant(config, rotated.refresh_token as string),
      (err: oidc.ResponseBodyError) => err.error === 'invalid_grant',
      'presenting a rotated token revoked the grant',
    );
    await tab.context.close();
  });

  it('disabling the account ends its tokens at once: introspection inactive, refresh refused', async () => {
    const email = 'ada@pages.test';
    const password = 'analytical engine notes of 1843';
    const created = await stack.adminApi('POST', '/api/v1/users', { email, password });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const tab = await openTab(stack);
    const config = await rp(tools);
    const r = await request(config);
    const back = await authorize(tab.context, r.url, signInAs(email, password));
    const tokens = await oidc.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: r.verifier,
      expectedState: r.state,
      expectedNonce: r.nonce,
    });
    assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, true);
    const id = (created.body as { id: string }).id;
    assert.equal((await stack.adminApi('PUT', `/api/v1/users/${id}`, { status: 'disabled' })).status, 200);
    assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, false);
    await assert.rejects(
      oidc.refreshTokenGrant(config, tokens.refresh_token as string),
      (err: oidc.ResponseBodyError) => err.error === 'invalid_grant',
    );
    await tab.context.close();
  });
});
