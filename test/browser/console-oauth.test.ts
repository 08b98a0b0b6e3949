import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleScreenshot, readSecretPanel, signInToConsole } from './console-support.ts';
import {
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

const API = 'https://billing.example.test/api';

/** A client-credentials token request with this secret: the proof that a shown secret is the real one. */
async function tokenStatus(stack: Stack, clientId: string, secret: string): Promise<number> {
  const res = await fetch(`${stack.origin}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  await res.arrayBuffer();
  return res.status;
}

describe('admin console in Chromium: OAuth clients and APIs', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  before(async () => {
    // Registration tokens are used (and so made) only with this setting (docs/oauth.md).
    stack = await startStack({ OAUTH_DYNAMIC_REGISTRATION: 'token' });
  });
  after(async () => {
    await stack?.close();
  });

  it('API and client: create → secret shown once (copy) and working → listed → edit → rotate → delete', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await signInToConsole(page, stack.origin);
    await page.getByRole('link', { name: 'OAuth apps' }).click();
    await page.getByRole('heading', { name: 'OAuth apps', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'No clients yet.' }).waitFor();

    // An API with one scope, then a longer token lifetime.
    const apiForm = page.locator('#resource-form');
    await apiForm.getByLabel('Identifier').fill(API);
    await apiForm.getByLabel('Name').fill('Billing API');
    await apiForm.getByLabel('Scopes', { exact: true }).fill('invoices:read Read your invoices');
    await page.getByRole('button', { name: 'Add API' }).click();
    await page.getByRole('status').filter({ hasText: 'Billing API was added.' }).waitFor();
    const apiRow = page.locator('#resources-body tr').filter({ hasText: API });
    await apiRow.filter({ hasText: '300 s' }).waitFor();
    await page.getByRole('button', { name: 'Edit Billing API' }).click();
    assert.equal(await apiForm.getByLabel('Identifier').isDisabled(), true, 'the identifier is fixed');
    await apiForm.getByLabel('Access token lifetime (seconds)').fill('600');
    await page.getByRole('button', { name: 'Save changes' }).last().click();
    await apiRow.filter({ hasText: '600 s' }).waitFor();

    // A confidential worker using that API: its secret is shown this once.
    const form = page.locator('#client-form');
    await form.getByLabel('Name').fill('Billing worker');
    await form.getByLabel('Authorization code (with PKCE)').uncheck();
    await form.getByLabel('Refresh token').uncheck();
    await form.getByLabel('Client credentials (confidential only)').check();
    await form.getByLabel('Scopes', { exact: true }).fill('invoices:read');
    await form.getByLabel('APIs (resource identifiers)').fill(API);
    await page.getByRole('button', { name: 'Create client' }).click();
    const panel = page.getByRole('region', { name: 'Client secret' });
    await panel.waitFor();
    await assertAccessible(page, 'oauth apps: a new client secret');
    await consoleScreenshot(page, 'oauth-desktop-light');
    const secret = await readSecretPanel(page, panel);
    const clients = (await stack.adminApi('GET', '/api/v1/clients')).body as {
      data: Array<{ client_id: string; name: string }>;
    };
    const clientId = clients.data.find((c) => c.name === 'Billing worker')?.client_id as string;
    assert.ok(clientId);
    await page.locator('#clients-body tr').filter({ hasText: clientId }).waitFor();
    assert.equal(await tokenStatus(stack, clientId, secret), 200, 'the shown secret is the client’s');
    assert.equal(await tokenStatus(stack, clientId, `${secret}x`), 401);
    // Shown once: after "stored", nothing on the page or in the API holds it any more.
    await panel.getByRole('button', { name: 'I have stored it' }).click();
    await panel.waitFor({ state: 'hidden' });
    assert.equal((await page.content()).includes(secret), false);
    assert.equal(JSON.stringify(clients).includes(secret), false);

    // Edit: a new name, the code grant and its redirect URI.
    await page.getByRole('button', { name: 'Edit Billing worker' }).click();
    await page.getByRole('heading', { name: 'Edit Billing worker' }).waitFor();
    assert.equal(await form.getByLabel('Type', { exact: true }).isDisabled(), true);
    await form.getByLabel('Name').fill('Billing service');
    await form.getByLabel('Authorization code (with PKCE)').check();
    await form.getByLabel('Redirect URIs', { exact: true }).fill('https://billing.example.test/callback');
    await page.getByRole('button', { name: 'Save changes' }).first().click();
    await page.getByRole('status').filter({ hasText: 'Billing service was saved.' }).waitFor();
    const row = page.locator('#clients-body tr').filter({ hasText: clientId });
    await row.filter({ hasText: 'authorization_code, client_credentials' }).waitFor();
    assert.match(await row.innerText(), /Billing service[\s\S]*https:\/\/billing\.example\.test\/callback/);
    assert.equal((await page.content()).includes(secret), false, 'editing never shows the secret');

    // Rotate: the old secret stops at once, the new one (shown once) works.
    await page.getByRole('button', { name: 'Edit Billing service' }).click();
    await page.getByRole('button', { name: 'Rotate secret…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the secret of Billing service?' });
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    await panel.waitFor();
    const rotated = await readSecretPanel(page, panel);
    assert.notEqual(rotated, secret);
    assert.equal(await tokenStatus(stack, clientId, secret), 401);
    assert.equal(await tokenStatus(stack, clientId, rotated), 200);
    await panel.getByRole('button', { name: 'I have stored it' }).click();

    // An API a client lists cannot go (409 resource_in_use, its detail shown); the client can.
    await page.getByRole('button', { name: 'Edit Billing API' }).click();
    await page.getByRole('button', { name: 'Delete API…' }).click();
    await page
      .getByRole('dialog', { name: 'Delete Billing API?' })
      .getByRole('button', { name: 'Delete API' })
      .click();
    await page
      .locator('#resource-form')
      .getByRole('alert')
      .filter({ hasText: '1 client(s) may ask for this resource; remove it from them first' })
      .waitFor();
    const kept = (await stack.adminApi('GET', '/api/v1/resources')).body as { data: unknown[] };
    assert.equal(kept.data.length, 1, 'refused: the API is still there');
    await page.getByRole('button', { name: 'Edit Billing service' }).click();
    await page.getByRole('button', { name: 'Delete client…' }).click();
    const sure = page.getByRole('dialog', { name: 'Delete Billing service?' });
    await sure.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await tokenStatus(stack, clientId, rotated), 200, 'cancelled: the client still works');
    await page.getByRole('button', { name: 'Delete client…' }).click();
    await sure.getByRole('button', { name: 'Delete client' }).click();
    await page.getByRole('cell', { name: 'No clients yet.' }).waitFor();
    assert.equal(await tokenStatus(stack, clientId, rotated), 401, 'a deleted client is refused');
    await page.getByRole('button', { name: 'Edit Billing API' }).click();
    await page.getByRole('button', { name: 'Delete API…' }).click();
    await page
      .getByRole('dialog', { name: 'Delete Billing API?' })
      .getByRole('button', { name: 'Delete API' })
      .click();
    await page.getByRole('cell', { name: 'No APIs yet.' }).waitFor();
    assert.deepEqual((await stack.adminApi('GET', '/api/v1/resources')).body, { data: [] });

    // A public native client has no secret: nothing is shown.
    await form.getByLabel('Name').fill('Command-line tool');
    await form.getByLabel('Type', { exact: true }).selectOption('public');
    await form.getByLabel('Application type').selectOption('native');
    await form.getByLabel('Redirect URIs', { exact: true }).fill('http://127.0.0.1/callback');
    await page.getByRole('button', { name: 'Create client' }).click();
    await page.getByRole('status').filter({ hasText: 'Command-line tool was created.' }).waitFor();
    await page.locator('#clients-body tr').filter({ hasText: 'public, native' }).waitFor();
    assert.equal(await panel.isVisible(), false, 'a public client has no secret to show');
    assertClean(tab);
    await tab.context.close();
  });

  it('registration token: a bad lifetime is refused; created → shown once (copy) → registers one client → forgotten', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await signInToConsole(page, stack.origin);
    await page.getByRole('link', { name: 'OAuth apps' }).click();
    const form = page.locator('#registration-form');
    await form.waitFor();
    const panel = page.getByRole('region', { name: 'Registration token' });
    await form.getByLabel('Valid for (seconds)').fill('59');
    await page.getByRole('button', { name: 'Create registration token' }).click();
    await form.getByRole('alert').filter({ hasText: /60/ }).waitFor();
    assert.equal(await panel.isVisible(), false, 'nothing made, nothing shown');

    await form.getByLabel('Valid for (seconds)').fill('600');
    await page.getByRole('button', { name: 'Create registration token' }).click();
    await panel.waitFor();
    await page.getByRole('status').filter({ hasText: 'A registration token was created.' }).waitFor();
    await assertAccessible(page, 'oauth apps: a new registration token');
    await consoleScreenshot(page, 'oauth-registration-token-desktop-light');
    const token = await readSecretPanel(page, panel);
    // The shown value is the token: it registers one client (RFC 7591), and only one.
    const register = () =>
      fetch(`${stack.origin}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ client_name: 'Agent', redirect_uris: ['https://agent.example.test/cb'] }),
      });
    const first = await register();
    assert.equal(first.status, 201, await first.text());
    const second = await register();
    await second.arrayBuffer();
    assert.equal(second.status, 401, 'a token registers one client');
    await panel.getByRole('button', { name: 'I have stored it' }).click();
    await panel.waitFor({ state: 'hidden' });
    assert.equal((await page.content()).includes(token), false, 'shown once: gone from the page');
    assertClean(tab);
    await tab.context.close();
  });

  it('the OAuth page shows only while the oauth module is on, and a switch updates the navigation', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    const link = page.getByRole('link', { name: 'OAuth apps' });
    await link.waitFor();
    await page.getByRole('link', { name: 'Modules' }).click();
    await page.getByRole('switch', { name: 'oauth', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'oauth is off' }).waitFor();
    await link.waitFor({ state: 'hidden' });
    // A bookmarked #/oauth of a module that is off lands on the users list, asking /clients nothing.
    const calls: string[] = [];
    page.on('request', (r) => calls.push(new URL(r.url()).pathname));
    await page.goto(`${stack.origin}/admin#/oauth`);
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    assert.equal(calls.includes('/api/v1/clients'), false);
    await page.getByRole('link', { name: 'Modules' }).click();
    await page.getByRole('switch', { name: 'oauth', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'oauth is on' }).waitFor();
    await link.waitFor();
    assertClean(tab);
    await tab.context.close();
  });
});
