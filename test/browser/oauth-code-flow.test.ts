import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { DIALECTS } from '../helpers/databases.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  launchBrowser,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
  totp,
} from './harness.ts';
import {
  APP,
  authorize,
  authRequest,
  CALLBACK,
  enrolTotp,
  exchange,
  logOutAtProvider,
  NATIVE_CALLBACK,
  publicRelyingParty,
  type Registered,
  registerClient,
  relyingParty,
  sessionAmrs,
  signInAs,
} from './oauth-support.ts';
import { addPasskeyOnAccount, addVirtualAuthenticator, withoutPasskeyAutofill } from './passkey-support.ts';

const signIn = signInAs(ADMIN_EMAIL, ADMIN_PASSWORD);

/**
 * docs/api.md §17 through a real browser and a real relying party, on each database dialect:
 * openid-client builds the authorization request (PKCE S256, state, nonce), Chromium signs in on
 * the hosted pages (password, TOTP, passkey) and consents, and openid-client exchanges the code,
 * refreshes, introspects and logs out. One Chromium serves every dialect.
 */
let browser: Browser | undefined;
after(async () => {
  await browser?.close();
});

for (const dialect of DIALECTS) {
  describe(`oauth authorization code flow in Chromium with openid-client (${dialect})`, {
    skip: skipWithoutChromium,
  }, () => {
    let stack: Stack;
    let wiki: Registered;
    let tools: Registered;
    let other: Registered;
    let cli: Registered;
    let ownCli: Registered;

    before(async () => {
      browser ??= await launchBrowser();
      stack = await startStack({}, { dialect, browser });
      wiki = await registerClient(stack, {
        name: 'Team Wiki',
        redirect_uris: [CALLBACK],
        post_logout_redirect_uris: [`${APP}/bye`],
      });
      tools = await registerClient(stack, { name: 'Tools', redirect_uris: [CALLBACK], first_party: true });
      other = await registerClient(stack, { name: 'Other App', redirect_uris: [CALLBACK] });
      cli = await registerClient(stack, {
        name: 'Desktop',
        type: 'public',
        application_type: 'native',
        redirect_uris: [NATIVE_CALLBACK],
      });
      ownCli = await registerClient(stack, {
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
      const config = await relyingParty(stack, wiki);
      const r = await authRequest(config);
      const back = await authorize(tab.context, r.url, async (page) => {
        await signIn(page);
        await page.getByRole('heading', { name: /Team Wiki asks for access/ }).waitFor();
        await page.getByText('See your e-mail address').waitFor();
        await page.getByRole('button', { name: 'Allow' }).click();
      });
      assert.equal(back.searchParams.get('state'), r.state);
      const tokens = await exchange(config, back, r);
      const claims = tokens.claims();
      assert.ok(claims);
      assert.equal(claims.email, ADMIN_EMAIL);
      assert.equal(claims.iss, stack.origin);
      assert.equal(typeof claims.auth_time, 'number');
      assert.equal(tokens.refresh_token, undefined, 'a third-party client without offline_access gets none');
      const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      assert.equal(info.email, ADMIN_EMAIL);

      // The consent is stored per (user, client): prompt=none now answers with a code, silently.
      const silent = await authRequest(config, { prompt: 'none' });
      const again = await authorize(tab.context, silent.url);
      assert.ok(again.searchParams.get('code'), again.href);

      // A third-party native client is asked every time (RFC 8252 §8.6): prompt=none cannot proceed.
      const nativeConfig = await publicRelyingParty(stack, cli);
      const nativeRequest = await authRequest(nativeConfig, {
        prompt: 'none',
        redirect_uri: NATIVE_CALLBACK,
      });
      const nativeBack = await authorize(tab.context, nativeRequest.url);
      assert.equal(nativeBack.searchParams.get('error'), 'interaction_required');
      // …but a first-party native client never sees consent: prompt=none goes straight through.
      const ownConfig = await publicRelyingParty(stack, ownCli);
      const ownRequest = await authRequest(ownConfig, { prompt: 'none', redirect_uri: NATIVE_CALLBACK });
      const ownBack = await authorize(tab.context, ownRequest.url);
      assert.ok(ownBack.searchParams.get('code'), ownBack.href);

      // Connected apps: the consent is listed; revoking it ends the app's tokens at once.
      const apps = await stack.adminApi('GET', '/api/v1/grants');
      const listed = (apps.body as { data: Array<{ client_id: string; name: string; scopes: string[] }> })
        .data;
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
      const landedAt = await logOutAtProvider(tab, config, tokens.id_token as string);
      assert.equal(landedAt.startsWith(`${APP}/bye`), true, landedAt);
      await tab.context.close();
    });

    it('a fresh browser with prompt=none gets login_required', async () => {
      const tab = await openTab(stack);
      const config = await relyingParty(stack, wiki);
      const r = await authRequest(config, { prompt: 'none' });
      const back = await authorize(tab.context, r.url);
      assert.equal(back.searchParams.get('error'), 'login_required');
      await tab.context.close();
    });

    it('denying consent answers access_denied', async () => {
      const tab = await openTab(stack);
      const r = await authRequest(await relyingParty(stack, other));
      const back = await authorize(tab.context, r.url, async (page) => {
        await signIn(page);
        await page.getByRole('button', { name: 'Deny' }).click();
      });
      assert.equal(back.searchParams.get('error'), 'access_denied');
      await tab.context.close();
    });

    it('a first-party client sees no consent, gets a refresh token, and a reused refresh token revokes the grant', async () => {
      const tab = await openTab(stack);
      const config = await relyingParty(stack, tools);
      const r = await authRequest(config, { prompt: 'consent' });
      const back = await authorize(tab.context, r.url, signIn);
      const tokens = await exchange(config, back, r);
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
      const config = await relyingParty(stack, tools);
      const r = await authRequest(config);
      const back = await authorize(tab.context, r.url, signInAs(email, password));
      const tokens = await exchange(config, back, r);
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

    it('TOTP as the second factor, then a passkey: sign-in and consent in the browser, prompt=none, refresh, introspection, RP-initiated logout', async () => {
      const email = 'grace@pages.test';
      const password = 'compilers are translators too 1952';
      const created = await stack.adminApi('POST', '/api/v1/users', { email, password });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const secret = await enrolTotp(stack, email, password);
      const notes = await registerClient(stack, {
        name: 'Notes',
        redirect_uris: [CALLBACK],
        post_logout_redirect_uris: [`${APP}/bye`],
        scopes: ['openid', 'profile', 'email', 'offline_access'],
      });
      const config = await relyingParty(stack, notes);
      const tab = await openTab(stack);
      await addVirtualAuthenticator(tab);
      await withoutPasskeyAutofill(tab);

      // The password, then the code from the authenticator app, then consent (offline_access too).
      const r = await authRequest(config, { scope: 'openid email offline_access', prompt: 'consent' });
      const back = await authorize(
        tab.context,
        r.url,
        async (page) => {
          await signInAs(email, password)(page);
          await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
          // The next time step: the one the enrolment confirmed is spent; one step of drift is accepted.
          await page.getByLabel('Code from your authenticator app').fill(totp(secret, Date.now() + 30_000));
          await page.getByRole('button', { name: 'Verify' }).click();
          await page.getByRole('heading', { name: /Notes asks for access/ }).waitFor();
          await page.getByText('Keep access while you are not using it').waitFor();
          await page.getByRole('button', { name: 'Allow' }).click();
        },
        tab.page,
      );
      const tokens = await exchange(config, back, r);
      const claims = tokens.claims();
      assert.ok(claims);
      assert.equal(claims.email, email);
      // The Gatehouse session behind this sign-in records both factors.
      const userId = (created.body as { id: string }).id;
      const amrs = await sessionAmrs(stack, userId);
      assert.ok(amrs.includes('pwd otp'), JSON.stringify(amrs));
      assert.ok(tokens.refresh_token, 'offline_access granted with prompt=consent gives a refresh token');
      assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, true);

      // prompt=none after that sign-in: a code at once, from the same sign-in (same auth_time).
      const silent = await authRequest(config, { scope: 'openid email', prompt: 'none' });
      const silentBack = await authorize(tab.context, silent.url, undefined, tab.page);
      const silentClaims = (await exchange(config, silentBack, silent)).claims();
      assert.equal(silentClaims?.sub, claims.sub);
      assert.equal(silentClaims?.auth_time, claims.auth_time);

      // A passkey, added on /account with this browser's virtual authenticator.
      await addPasskeyOnAccount(tab.page, stack.origin, 'Grace laptop', password);

      // prompt=login: the page signs out and in again, with the passkey alone this time; consent
      // asks only for what is new (the profile).
      const byPasskey = await authRequest(config, { scope: 'openid email profile', prompt: 'login' });
      const passkeyBack = await authorize(
        tab.context,
        byPasskey.url,
        async (page) => {
          await page.waitForURL(/\/account\/sign-in\?next=/);
          await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
          await page.getByRole('heading', { name: /Notes asks for access/ }).waitFor();
          await page.getByText('See your name').waitFor();
          assert.equal(await page.getByText(/See your e-mail address/).count(), 0, 'granted before');
          await page.getByRole('button', { name: 'Allow' }).click();
        },
        tab.page,
      );
      const passkeyTokens = await exchange(config, passkeyBack, byPasskey);
      assert.equal(passkeyTokens.claims()?.sub, claims.sub);
      const passkeyAmrs = (await sessionAmrs(stack, userId)).join(', ');
      assert.match(passkeyAmrs, /\b[hs]wk user\b/, 'a session signed in by the passkey');

      // RP-initiated logout ends the sign-in, Gatehouse's own included: prompt=none now answers
      // login_required and a plain request shows the sign-in form. The grant has
      // offline_access, so its refresh token outlives the logout (docs/api.md §17), rotated on use.
      const landedAt = await logOutAtProvider(tab, config, passkeyTokens.id_token as string);
      assert.equal(landedAt.startsWith(`${APP}/bye`), true, landedAt);
      const gone = await authRequest(config, { scope: 'openid email', prompt: 'none' });
      const goneBack = await authorize(tab.context, gone.url, undefined, tab.page);
      assert.equal(goneBack.searchParams.get('error'), 'login_required');
      // The hole: the hosted pages' own session outlived the logout, so a plain request went through
      // without asking. Now the sign-in form appears; consent was stored, so none is asked.
      const again = await authRequest(config, { scope: 'openid email' });
      const againBack = await authorize(
        tab.context,
        again.url,
        async (page) => {
          await page.waitForURL(/\/account\/sign-in\?next=/);
          await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
        },
        tab.page,
      );
      assert.equal((await exchange(config, againBack, again)).claims()?.sub, claims.sub);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
      assert.ok(refreshed.refresh_token);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token, 'rotated on use');
      assert.equal((await oidc.tokenIntrospection(config, refreshed.access_token)).active, true);
      await tab.context.close();
    });
  });
}
