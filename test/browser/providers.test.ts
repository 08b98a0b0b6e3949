import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { DIALECTS } from '../helpers/databases.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';
import {
  apiNotBuilt,
  assertAccessible,
  launchBrowser,
  openTab,
  type Stack,
  screenshot,
  skipWithoutChromium,
  startStack,
  type Tab,
} from './harness.ts';

const SECRET = 'browser-test-client-secret';

// docs/api.md §18 end to end: the hosted sign-in page's buttons, a real provider's login and consent
// pages, the callback, and the session the pages continue with — in Chromium, against two real
// oidc-provider instances, on each database dialect (one Chromium for all).
let browser: Browser | undefined;
after(async () => {
  await browser?.close();
});

for (const dialect of DIALECTS) {
  describe(`hosted pages in Chromium: sign-in through external providers (${dialect})`, {
    skip: skipWithoutChromium || apiNotBuilt('providers'),
  }, () => {
    let stack: Stack;
    let one: OidcHarness;
    let two: OidcHarness;

    before(async () => {
      browser ??= await launchBrowser();
      stack = await startStack({}, { dialect, browser });
      const callback = (name: string) => `${stack.origin}/api/v1/idp/${name}/callback`;
      one = await startOidcProvider({
        clientId: 'one',
        clientSecret: SECRET,
        redirectUris: [callback('one')],
      });
      two = await startOidcProvider({
        clientId: 'two',
        clientSecret: SECRET,
        redirectUris: [callback('two')],
        accounts: {
          carol: { email: 'carol@pages.test', email_verified: true, name: 'Carol' },
          mallory: { email: 'victim@pages.test', email_verified: false, name: 'Mallory' },
          dave: { email: 'dave@pages.test', email_verified: true, name: 'Dave' },
        },
      });
      const add = async (body: Record<string, unknown>) => {
        const res = await stack.adminApi('POST', '/api/v1/idp/providers', body);
        assert.equal(res.status, 201, JSON.stringify(res.body));
      };
      await add({
        name: 'one',
        display_name: 'Acme ID',
        issuer: one.issuer,
        client_id: 'one',
        client_secret: SECRET,
      });
      await add({
        name: 'two',
        display_name: 'Example SSO',
        issuer: two.issuer,
        client_id: 'two',
        client_secret: SECRET,
      });
      // A third, never clicked: the page shows one button per enabled provider, with its own icon.
      await add({
        name: 'google',
        preset: 'google',
        client_id: 'unused.apps.googleusercontent.com',
        client_secret: 'x',
      });
    });
    after(async () => {
      await stack?.close();
      await one?.stop();
      await two?.stop();
    });

    /** A tab whose only requests off the service's origin go to the two providers (their pages' web font is dropped). */
    async function tab(): Promise<Tab> {
      const t = await openTab(stack);
      await t.context.route(/fonts\.googleapis\.com|fonts\.gstatic\.com/, (route) => route.abort());
      return t;
    }

    function assertOnlyProviders(t: Tab): void {
      const allowed = [one.issuer, two.issuer];
      const other = t.offOrigin.filter((u) => !allowed.includes(new URL(u).origin) && !/fonts\.g/.test(u));
      assert.deepEqual(other, [], 'a request left for somewhere else than the service and the providers');
      const ours = t.errors.filter((e) => !/Failed to load resource|fonts\.g/.test(e));
      assert.deepEqual(ours, [], 'the page logged errors');
    }

    /** Clicks "Continue with <label>" on the sign-in page and goes through the provider's forms. */
    async function continueWith(page: Page, label: string, account: string): Promise<void> {
      await page.getByRole('link', { name: `Continue with ${label}` }).click();
      await page.locator('input[name=login]').fill(account);
      await page.locator('input[name=password]').fill('anything');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
    }

    it('shows one plain link per enabled provider, accessible, nothing loaded from elsewhere', async () => {
      const t = await tab();
      const { page } = t;
      await page.goto(`${stack.origin}/account/sign-in`);
      const links = page.getByRole('navigation', { name: 'Other ways to sign in' }).getByRole('link');
      await links.first().waitFor();
      assert.deepEqual(await links.allTextContents(), [
        'Continue with Google',
        'Continue with Acme ID',
        'Continue with Example SSO',
      ]);
      for (const href of await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')))) {
        assert.match(String(href), /^\/api\/v1\/idp\/[a-z]+\/start\?return_to=%2Faccount$/);
      }
      assert.equal(await page.locator('#providers form').count(), 0, 'links, not forms');
      await assertAccessible(page, 'the sign-in page with three providers');
      await screenshot(page, 'sign-in-providers-desktop-light');
      assert.deepEqual(t.offOrigin, []);
      assertOnlyProviders(t);
      await t.context.close();
    });

    it('first sign-in provisions and lands signed in on /account; the second finds the same account', async () => {
      for (const round of [1, 2]) {
        const t = await tab();
        const { page } = t;
        let callbackUrl = '';
        page.on('request', (r) => {
          if (r.url().includes('/api/v1/idp/one/callback')) callbackUrl = r.url();
        });
        await page.goto(`${stack.origin}/account/sign-in`);
        await continueWith(page, 'Acme ID', 'alice');
        await page.waitForURL(`${stack.origin}/account`);
        await page.getByText('alice@example.com').first().waitFor();
        assert.ok(!page.url().includes('code='), 'no code or token in the address bar');
        assertOnlyProviders(t);
        if (round === 2) {
          // The same callback again in the browser that started it, once signed out (the back
          // button): its state is single use, so it is refused and nobody is signed in.
          await page.getByRole('button', { name: 'Sign out', exact: true }).click();
          await page.waitForURL(`${stack.origin}/account/sign-in`);
          await page.goto(callbackUrl);
          await page.waitForURL(`${stack.origin}/account/sign-in?error=link_invalid`);
          await page.getByRole('alert').filter({ hasText: 'That sign-in did not complete' }).waitFor();
        }
        await t.context.close();
        if (round === 2) {
          // The callback once more, from another browser (a leaked URL, a shared screen): spent, and
          // it lands on the sign-in page with a plain sentence; nobody is signed in.
          const other = await tab();
          await other.page.goto(callbackUrl);
          await other.page.waitForURL(`${stack.origin}/account/sign-in?error=link_invalid`);
          await other.page.getByRole('alert').filter({ hasText: 'That sign-in did not complete' }).waitFor();
          await other.context.close();
        }
      }
      const found = await stack.adminApi('GET', '/api/v1/users/search?q=alice%40example.com');
      assert.equal((found.body as { data: unknown[] }).data.length, 1);
    });

    it('a verified address links to the existing account; an unverified one is refused with a plain sentence', async () => {
      const carol = await stack.adminApi('POST', '/api/v1/users', {
        email: 'carol@pages.test',
        password: 'carol has a long password 1',
      });
      assert.equal(carol.status, 201);
      const t = await tab();
      await t.page.goto(`${stack.origin}/account/sign-in`);
      await continueWith(t.page, 'Example SSO', 'carol');
      await t.page.waitForURL(`${stack.origin}/account`);
      await t.page.getByText('carol@pages.test').first().waitFor();
      const id = (carol.body as { id: string }).id;
      const identities = await stack.adminApi('GET', `/api/v1/users/${id}/identities`);
      assert.equal((identities.body as { data: Array<{ issuer: string }> }).data[0]?.issuer, two.issuer);
      await t.context.close();

      await stack.adminApi('POST', '/api/v1/users', {
        email: 'victim@pages.test',
        password: 'victim has a long password',
      });
      const m = await tab();
      await m.page.goto(`${stack.origin}/account/sign-in`);
      await continueWith(m.page, 'Example SSO', 'mallory');
      await m.page.waitForURL(`${stack.origin}/account/sign-in?error=idp_token_invalid`);
      await m.page.getByRole('alert').filter({ hasText: 'could not be accepted' }).waitFor();
      await assertAccessible(m.page, 'the sign-in page after a refused provider sign-in');
      await m.context.close();
    });

    it('a foreign return_to is refused before the provider is contacted', async () => {
      const t = await tab();
      const res = await t.page.goto(
        `${stack.origin}/api/v1/idp/one/start?return_to=${encodeURIComponent('https://evil.example/')}`,
      );
      assert.equal(res?.status(), 400);
      assert.deepEqual(t.offOrigin, []);
      await t.context.close();
    });

    it("asks for the account's own second factor, then continues to return_to", async () => {
      const password = 'dave has a long password 12';
      const created = await stack.adminApi('POST', '/api/v1/users', { email: 'dave@pages.test', password });
      assert.equal(created.status, 201);
      const login = await fetch(`${stack.origin}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'dave@pages.test', password }),
      });
      const bearer = {
        authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`,
      };
      const json = { ...bearer, 'content-type': 'application/json' };
      const enrol = await fetch(`${stack.origin}/api/v1/mfa/totp`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ current_password: password }),
      });
      const { secret } = (await enrol.json()) as { secret: string };
      const { totp } = await import('./harness.ts');
      const confirm = await fetch(`${stack.origin}/api/v1/mfa/totp/confirm`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ code: totp(secret) }),
      });
      const { recovery_codes } = (await confirm.json()) as { recovery_codes: string[] };

      const t = await tab();
      const { page } = t;
      await page.goto(`${stack.origin}/account/sign-in?next=/account`);
      await continueWith(page, 'Example SSO', 'dave');
      await page.waitForURL(`${stack.origin}/account/sign-in?continue=provider`);
      await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
      await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await page.getByLabel('Recovery code').fill(recovery_codes[0] ?? '');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`${stack.origin}/account`);
      await page.getByText('dave@pages.test').first().waitFor();
      assertOnlyProviders(t);
      await t.context.close();
    });

    it('links a provider from /account after a recent sign-in, and unlinks it after a fresh proof', async () => {
      const password = 'henry has a long password 12';
      const created = await stack.adminApi('POST', '/api/v1/users', {
        email: 'henry@pages.test',
        password,
      });
      assert.equal(created.status, 201);
      const t = await tab();
      const { page } = t;
      await page.goto(`${stack.origin}/account/sign-in`);
      await page.getByLabel('E-mail address').fill('henry@pages.test');
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${stack.origin}/account`);
      await page.getByRole('button', { name: 'Link Acme ID' }).click();
      await page.locator('input[name=login]').fill('bob');
      await page.locator('input[name=password]').fill('anything');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(`${stack.origin}/account`);
      const section = page.getByRole('region', { name: 'Sign-in providers' });
      await section.getByRole('button', { name: 'Unlink Acme ID' }).waitFor();
      await assertAccessible(page, 'the account page with a linked provider');
      await section.getByRole('button', { name: 'Unlink Acme ID' }).click();
      await page.locator('#identity-remove-password').fill(password);
      await section.getByRole('button', { name: 'Unlink', exact: true }).click();
      await section.getByText('No provider is linked yet.').waitFor();
      assertOnlyProviders(t);
      await t.context.close();
    });
  });
}
