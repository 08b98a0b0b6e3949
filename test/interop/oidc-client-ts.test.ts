import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, skipWithoutChromium } from '../browser/harness.ts';
import { signInAs } from '../browser/oauth-support.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { freePort, type Gatehouse, listen, PASSWORD, startGatehouse } from './harness.ts';

/*
 * oidc-client-ts in Chromium: a single-page app on another origin (http://127.0.0.1:<port>, the
 * library's browser bundle and one page), a public client, and no CORS_ORIGINS. The app does what
 * the library's docs say: a `UserManager` with `authority`, `client_id`, `redirect_uri`,
 * `post_logout_redirect_uri`, `scope` and `loadUserInfo`; `signinRedirect` (code + PKCE, the person
 * signs in on Gatehouse's hosted page), `signinRedirectCallback` (the token call and userinfo, from
 * the app's origin), `signinSilent` (a refresh with the refresh token), `revokeTokens` and
 * `signoutRedirect` (Gatehouse's confirmation, then back to the app). Every call to Gatehouse from
 * the app's origin needs Gatehouse's CORS answer (docs/api.md §17).
 */

const require = createRequire(import.meta.url);
// The library's browser bundle (a global `oidc`), beside its package.json (the only file its exports name).
const BUNDLE = readFileSync(
  join(dirname(require.resolve('oidc-client-ts/package.json')), 'dist/browser/oidc-client-ts.min.js'),
  'utf8',
);

const page = (settings: Record<string, unknown>) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Notes</title>
<script src="/oidc-client-ts.js"></script>
<script>
  window.mgr = new oidc.UserManager(${JSON.stringify(settings)});
</script></head><body><p>Notes</p></body></html>`;

declare global {
  interface Window {
    // biome-ignore lint/suspicious/noExplicitAny: the library's UserManager from its browser bundle
    mgr: any;
  }
}

for (const dialect of DIALECTS) {
  describe(`interop: oidc-client-ts in Chromium (${dialect})`, { skip: skipWithoutChromium }, () => {
    let g: Gatehouse;
    let browser: Browser;
    let spa: { origin: string; close(): Promise<void> };
    let clientId: string;
    before(async () => {
      g = await startGatehouse(dialect);
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const registered = await g.client({
        name: 'Notes in the browser',
        type: 'public',
        application_type: 'web',
        redirect_uris: [`${origin}/callback.html`],
        post_logout_redirect_uris: [`${origin}/signed-out.html`],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access'],
        first_party: true,
      });
      clientId = registered.client_id;
      const html = page({
        authority: g.origin,
        client_id: clientId,
        redirect_uri: `${origin}/callback.html`,
        post_logout_redirect_uri: `${origin}/signed-out.html`,
        response_type: 'code',
        scope: 'openid profile email',
        loadUserInfo: true,
        automaticSilentRenew: false,
      });
      spa = await listen((req, res) => {
        if (req.url === '/oidc-client-ts.js') {
          res.writeHead(200, { 'content-type': 'text/javascript' }).end(BUNDLE);
        } else {
          res.writeHead(200, { 'content-type': 'text/html' }).end(html);
        }
      }, port);
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
      await spa?.close();
      await g?.close();
    });

    it('signs in, reads userinfo, refreshes, revokes and logs out from another origin', async () => {
      const p = await g.person();
      const context = await browser.newContext();
      const tab: Page = await context.newPage();
      const errors: string[] = [];
      // The app's own errors (a CORS refusal shows here); Gatehouse's hosted pages are tested elsewhere
      // (test/browser/), and their sign-in page's first session check answers 401 by design.
      tab.on('console', (m) => {
        if (m.type() === 'error' && tab.url().startsWith(spa.origin))
          errors.push(`${m.location().url}: ${m.text()}`);
      });
      tab.on('pageerror', (err) => {
        if (tab.url().startsWith(spa.origin)) errors.push(String(err));
      });

      await tab.goto(`${spa.origin}/index.html`);
      await tab.evaluate(() => {
        void window.mgr.signinRedirect();
      });
      await signInAs(p.email, PASSWORD)(tab);
      await tab.waitForURL(`${spa.origin}/callback.html?**`);
      const user = await tab.evaluate(async () => {
        const u = await window.mgr.signinRedirectCallback();
        return { profile: u.profile, refresh: u.refresh_token, idToken: u.id_token, access: u.access_token };
      });
      assert.equal(user.profile.sub, p.id);
      assert.equal(user.profile.iss, g.origin);
      assert.equal(user.profile.aud, clientId);
      assert.equal(user.profile.email, p.email);
      assert.equal(user.profile.name, p.name, 'from userinfo');
      assert.ok(user.refresh, 'a first-party client gets a refresh token');

      const renewed = await tab.evaluate(async () => {
        const u = await window.mgr.signinSilent();
        return { refresh: u.refresh_token, access: u.access_token, sub: u.profile.sub };
      });
      assert.equal(renewed.sub, p.id);
      assert.ok(renewed.refresh && renewed.refresh !== user.refresh, 'the refresh token rotated');
      assert.notEqual(renewed.access, user.access);

      await tab.evaluate(async () => {
        await window.mgr.revokeTokens(['refresh_token']);
      });
      const refused = await fetch(`${g.origin}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: renewed.refresh,
          client_id: clientId,
        }),
      });
      assert.equal(refused.status, 400);
      assert.equal(((await refused.json()) as { error: string }).error, 'invalid_grant', 'revoked');

      await tab.evaluate(() => {
        void window.mgr.signoutRedirect();
      });
      await tab.getByRole('button', { name: 'Yes, sign me out' }).click();
      await tab
        .waitForURL((u) => u.href.startsWith(`${spa.origin}/signed-out.html`))
        .catch((err: unknown) => assert.fail(`the logout stayed at ${tab.url()}: ${String(err)}`));
      const signedOut = await tab.evaluate(async () => {
        await window.mgr.signoutRedirectCallback();
        return (await window.mgr.getUser()) === null;
      });
      assert.equal(signedOut, true);
      assert.deepEqual(errors, [], 'no CORS or script error in the app');
      await context.close();
    });
  });
}
