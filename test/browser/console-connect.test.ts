import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleScreenshot, signInToConsole } from './console-support.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  assertAccessible,
  assertClean,
  linkFromMail,
  openTab,
  type Stack,
  screenshot,
  skipWithoutChromium,
  startStack,
} from './harness.ts';
import {
  APP,
  authorize,
  authRequest,
  CALLBACK,
  exchange,
  registerClient,
  relyingParty,
  signInAs,
} from './oauth-support.ts';

/**
 * The console helping an app developer (docs/console.md, "A client's page"): the Connect card with
 * the real issuer and endpoints and quick starts carrying the client's values, the hosted sign-in
 * naming the application, the logout confirmation in the pages' look, the registration card's
 * real state, re-sending an invitation, and the confirmation before switching off the console.
 */
describe('admin console in Chromium: a client page for app developers', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ APP_NAME: 'Acme ID' });
  });
  after(async () => {
    await stack?.close();
  });

  it("a client's page shows the discovery values and quick starts filled in with the client's; the table fits its card", async () => {
    const client = await registerClient(stack, {
      name: 'Team wiki',
      type: 'confidential',
      application_type: 'web',
      redirect_uris: [CALLBACK],
      post_logout_redirect_uris: [`${APP}/bye`],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email'],
    });
    const discovery = (await (
      await fetch(`${stack.origin}/.well-known/openid-configuration`)
    ).json()) as Record<string, string>;
    const tab = await openTab(stack);
    const { page } = tab;
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await signInToConsole(page, stack.origin);
    await page.goto(`${stack.origin}/admin#/oauth/${encodeURIComponent(client.client_id)}`);
    const card = page.getByRole('region', { name: 'Connect Team wiki' });
    await card.waitFor();
    const facts = card.locator('#connect-facts');
    await facts.getByText(discovery.token_endpoint as string, { exact: true }).waitFor();
    const shown = Object.fromEntries(
      await facts.evaluate((dl) => {
        const terms = [...dl.querySelectorAll('dt')].map((dt) => dt.textContent ?? '');
        return terms.map((t, i) => [t, dl.querySelectorAll('dd')[i]?.textContent ?? '']);
      }),
    ) as Record<string, string>;
    assert.equal(shown['Client id'], client.client_id);
    assert.equal(shown.Issuer, discovery.issuer);
    assert.equal(shown['Discovery URL'], `${discovery.issuer}/.well-known/openid-configuration`);
    assert.equal(shown['Authorization endpoint'], discovery.authorization_endpoint);
    assert.equal(shown['Userinfo endpoint'], discovery.userinfo_endpoint);
    assert.equal(shown['JWKS (signing keys)'], discovery.jwks_uri);
    assert.equal(shown['Logout (end session) endpoint'], discovery.end_session_endpoint);
    // The discovery URL the card names answers the same document.
    const again = (await (await fetch(shown['Discovery URL'] as string)).json()) as { issuer: string };
    assert.equal(again.issuer, discovery.issuer);

    // Each quick start carries this client's id, the issuer and its redirect URI, and copies as shown.
    for (const [name, callback] of [
      ['openid-client', CALLBACK],
      ['Auth.js (@auth/express)', `${APP}/auth/callback/gatehouse`],
      ['express-openid-connect', `${APP}/callback`],
    ] as const) {
      const section = card.getByRole('region', { name });
      const code = (await section.locator('pre').textContent()) ?? '';
      assert.ok(code.includes(`'${client.client_id}'`), `${name}: the client id`);
      assert.ok(code.includes(`'${discovery.issuer}'`), `${name}: the issuer`);
      assert.ok(code.includes(callback), `${name}: the redirect URI`);
      assert.ok(!code.includes(client.client_secret), `${name}: never the secret`);
      await section.getByRole('button', { name: `Copy the ${name} quick start` }).click();
      await section.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), code, `${name}: the copy`);
    }
    // The loopback issuer: openid-client is told that http is allowed here, and only here.
    const oc = (await card.getByRole('region', { name: 'openid-client' }).locator('pre').textContent()) ?? '';
    assert.match(oc, /allowInsecureRequests/);
    // The edit form is the same client's.
    assert.equal(await page.locator('#client-form').getByLabel('Name').inputValue(), 'Team wiki');

    // The clients table fits its card: no sideways scrolling at a desktop width, long ids included.
    const fits = await page.locator('#clients-table').evaluate((table) => {
      const wrap = table.parentElement as HTMLElement;
      return { table: table.scrollWidth, frame: wrap.clientWidth };
    });
    assert.ok(fits.table <= fits.frame, `the table (${fits.table}px) fits its frame (${fits.frame}px)`);

    // Dynamic registration is off here (the default): the card says so and offers no token form.
    const registration = page.getByRole('region', { name: 'Dynamic registration' });
    await registration.getByText('State: off').waitFor();
    assert.equal(await page.locator('#registration-form').isHidden(), true);
    await assertAccessible(page, "oauth apps: a client's page");
    await consoleScreenshot(page, 'oauth-client-desktop-light');
    assertClean(tab);
    assert.deepEqual(tab.errors, [], 'no console errors at all on a normal load');
    await tab.context.close();
  });

  it('the hosted sign-in names the application during an authorization; the logout page looks like the pages', async () => {
    const client = await registerClient(stack, {
      name: 'Team wiki 2',
      type: 'confidential',
      application_type: 'web',
      redirect_uris: [CALLBACK],
      post_logout_redirect_uris: [`${APP}/bye`],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email'],
      first_party: true,
    });
    const config = await relyingParty(stack, client);
    const request = await authRequest(config);
    const tab = await openTab(stack);
    const back = await authorize(tab.context, request.url, async (page) => {
      await page.waitForURL(/\/account\/sign-in\?next=/);
      await page.getByRole('heading', { name: 'Sign in to continue to Team wiki 2', level: 1 }).waitFor();
      assert.match(await page.title(), /Team wiki 2/);
      await assertAccessible(page, 'sign-in: naming the application');
      await screenshot(page, 'sign-in-app-desktop-light');
      await signInAs(ADMIN_EMAIL, ADMIN_PASSWORD)(page);
    });
    const tokens = await exchange(config, back, request);

    // The logout confirmation: the pages' stylesheet, header and card, and no console error.
    const logoutUrl = new URL(config.serverMetadata().end_session_endpoint as string);
    logoutUrl.searchParams.set('id_token_hint', tokens.id_token as string);
    const { page } = tab;
    await page.goto(logoutUrl.href);
    await page.getByRole('heading', { name: 'Sign out', level: 1 }).waitFor();
    const look = await page.evaluate(() => ({
      stylesheet: [...document.styleSheets].some((s) => (s.href ?? '').endsWith('/style.css')),
      header: document.querySelector('header.site')?.textContent ?? '',
      card: document.querySelector('main .card') !== null,
    }));
    assert.equal(look.stylesheet, true, 'the pages stylesheet is loaded');
    assert.equal(look.header.trim(), 'Acme ID');
    assert.equal(look.card, true);
    await assertAccessible(page, 'oauth: the logout confirmation');
    await screenshot(page, 'logout-confirmation-desktop-light');
    // Only the application's own address was left for (the redirect back with the code).
    assert.deepEqual(
      tab.offOrigin.filter((url) => !url.startsWith(APP)),
      [],
      'nothing else left the origin',
    );
    assert.deepEqual(tab.errors, [], 'no console errors on the logout page');
    await tab.context.close();
  });

  it("an invited user's page sends the invitation again; the new link works, the old one no longer does", async () => {
    const invited = await stack.adminApi('POST', '/api/v1/users/invite', {
      email: 'newbie@pages.test',
      name: 'Newbie',
    });
    assert.equal(invited.status, 201);
    const first = await linkFromMail(stack.smtp, 'newbie@pages.test', '/account/invitation/');
    const { id } = (invited.body as { user: { id: string } }).user;
    const tab = await openTab(stack);
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    await page.goto(`${stack.origin}/admin#/users/${id}`);
    await page.getByRole('heading', { name: 'Newbie', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Send the invitation again' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'A new invitation was sent to newbie@pages.test' })
      .waitFor();
    const second = await linkFromMail(stack.smtp, 'newbie@pages.test', '/account/invitation/');
    assert.notEqual(second, first);
    const token = (link: string) => link.split('/').pop() as string;
    assert.equal((await fetch(`${stack.origin}/api/v1/invite/${token(second)}`)).status, 200);
    assert.equal((await fetch(`${stack.origin}/api/v1/invite/${token(first)}`)).status, 410);
    // An active account has no such button.
    const me = (await stack.adminApi('GET', '/api/v1/users?limit=5')).body as {
      data: Array<{ id: string; email: string }>;
    };
    const admin = me.data.find((u) => u.email === ADMIN_EMAIL)?.id as string;
    await page.goto(`${stack.origin}/admin#/users/${admin}`);
    await page.locator('#u-email').filter({ hasText: ADMIN_EMAIL }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Send the invitation again' }).isHidden(), true);
    assertClean(tab);
    await tab.context.close();
  });

  it('switching off console or pages asks first; Cancel keeps it on', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    await page.goto(`${stack.origin}/admin#/modules`);
    for (const name of ['console', 'pages']) {
      const toggle = page.getByRole('switch', { name, exact: true });
      await toggle.click();
      const dialog = page.getByRole('dialog', { name: `Turn ${name} off?` });
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      assert.equal(await toggle.isChecked(), true, `${name} stays on`);
    }
    const modules = (await stack.adminApi('GET', '/api/v1/admin/modules')).body as {
      data: Array<{ name: string; enabled: boolean }>;
    };
    for (const name of ['console', 'pages']) {
      assert.equal(modules.data.find((m) => m.name === name)?.enabled, true, `${name} is still on`);
    }
    assertClean(tab);
    await tab.context.close();
  });

  it('no console page and no hosted page logs an error in the browser console on a normal load', async () => {
    // Links with real tokens, as a person would open them from their mail.
    const invited = await stack.adminApi('POST', '/api/v1/users/invite', { email: 'loads@pages.test' });
    assert.equal(invited.status, 201);
    const invitation = await linkFromMail(stack.smtp, 'loads@pages.test', '/account/invitation/');
    const admin = (
      (await stack.adminApi('GET', '/api/v1/users/search?q=admin%40pages.test&limit=1')).body as {
        data: Array<{ id: string }>;
      }
    ).data[0]?.id as string;
    const created = await stack.adminApi('POST', '/api/v1/users', {
      email: 'reader@pages.test',
      password: 'a long enough password for a reader 7',
    });
    assert.equal(created.status, 201);
    const reader = (created.body as { id: string }).id;
    assert.equal((await stack.adminApi('POST', `/api/v1/users/${reader}/password-reset`)).status, 202);
    const reset = await linkFromMail(stack.smtp, 'reader@pages.test', '/account/reset-password/');
    const clients = (await stack.adminApi('GET', '/api/v1/clients')).body as {
      data: Array<{ client_id: string }>;
    };

    const signedOut = [
      `${stack.origin}/account/sign-in`,
      `${stack.origin}/account/forgot-password`,
      invitation,
      reset,
    ];
    const tab = await openTab(stack);
    const { page } = tab;
    for (const url of signedOut) {
      await page.goto(url);
      await page.waitForLoadState('networkidle');
      assert.deepEqual(
        tab.errors,
        [],
        `console errors on ${new URL(url).pathname.replace(/[^/]{20,}$/, '<token>')}`,
      );
    }
    await signInToConsole(page, stack.origin);
    const views = [
      '#/users',
      `#/users/${admin}`,
      '#/new',
      '#/modules',
      '#/audit',
      '#/oauth',
      `#/oauth/${clients.data[0]?.client_id}`,
      '#/providers',
      '#/webhooks',
    ];
    for (const view of views) {
      await page.goto(`${stack.origin}/admin${view}`);
      await page.locator('#app').waitFor();
      await page.waitForLoadState('networkidle');
      assert.deepEqual(tab.errors, [], `console errors on /admin${view}`);
    }
    await page.goto(`${stack.origin}/account`);
    await page.waitForLoadState('networkidle');
    assert.deepEqual(tab.errors, [], 'console errors on /account');
    assert.deepEqual(tab.offOrigin, []);
    await tab.context.close();
  });
});
