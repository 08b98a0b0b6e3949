import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleScreenshot, readSecretPanel, recordApiCalls, signInToConsole } from './console-support.ts';
import {
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

// The console's API keys view (docs/console.md, docs/api-keys.md, API §22) in Chromium: a service
// account made, a scoped key made for it and shown once, the key used on /api/v1 within its scope
// and refused outside it, the owner's keys reached from the user's page, the key revoked by the
// keyboard after the confirmation and refused at once; an organization's key for verification.

async function withKey(stack: Stack, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${stack.origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe('admin console in Chromium: API keys and service accounts', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  it('service account → scoped key shown once → works on /api/v1 → revoked by keyboard → refused', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await signInToConsole(page, stack.origin);

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys and service accounts', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'No keys yet.' }).waitFor();

    // A service account (role admin: its key is to read the users list).
    await page.locator('#sa-name').fill('CI deploy');
    await page.locator('#sa-role').selectOption('admin');
    await page.getByRole('button', { name: 'Create service account' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'The service account CI deploy was created. Make its first key below.' })
      .waitFor();
    const accountId = await page.locator('#key-owner').inputValue();
    const account = await stack.adminApi('GET', `/api/v1/users/${accountId}`);
    assert.equal(account.status, 200);
    assert.deepEqual(
      [(account.body as { kind: string }).kind, (account.body as { role: string }).role],
      ['service', 'admin'],
    );

    // A key for it with one scope, shown once with a copy button.
    const create = page.locator('#key-create');
    await create.getByLabel('Name of the key').fill('ci-deploy');
    await create.getByLabel('users:read', { exact: true }).check();
    await create.getByLabel('Requests').fill('100');
    await create.getByLabel('Window in seconds').fill('60');
    await page.getByRole('button', { name: 'Create key' }).click();
    const panel = page.locator('#keys-secret');
    await panel.getByRole('heading', { name: 'The new key' }).waitFor();
    await panel.getByText('Copy it now: you will not see it again.').waitFor();
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      'keys-secret-title',
      'focus moves to the shown key',
    );
    const key = await readSecretPanel(page, panel);
    assert.match(key, /^gate_[0-9A-Za-z]{38}$/);
    await page.getByRole('cell', { name: 'ci-deploy', exact: true }).waitFor();
    await page.getByRole('link', { name: 'CI deploy (service account)' }).waitFor();
    await page.getByRole('cell', { name: 'users:read', exact: true }).waitFor();
    const listed = await stack.adminApi('GET', `/api/v1/api-keys?owner=user:${accountId}`);
    const stored = (listed.body as { data: Array<Record<string, unknown>> }).data[0];
    assert.deepEqual(stored?.scopes, ['users:read']);
    assert.deepEqual(stored?.rate_limit, { requests: 100, window_s: 60 });
    assert.equal((await page.getByText(String(stored?.prefix), { exact: false }).count()) > 0, true);
    await assertAccessible(page, 'the console API keys with a key shown');
    await consoleScreenshot(page, 'console-api-keys');

    // "I have stored it" takes the key off the page.
    await panel.getByRole('button', { name: 'I have stored it' }).click();
    assert.equal(await panel.isHidden(), true);
    assert.equal(await panel.locator('code').textContent(), '');

    // The shown key works on /api/v1 within its scope, and only there.
    const read = await withKey(stack, key, 'GET', '/api/v1/users?kind=service');
    assert.equal(read.status, 200);
    assert.equal((read.body as { data: Array<{ id: string }> }).data[0]?.id, accountId);
    const write = await withKey(stack, key, 'POST', '/api/v1/users', { email: 'x@pages.test' });
    assert.equal(write.status, 403);
    assert.equal((write.body as { code: string }).code, 'insufficient_scope');

    // The owner's page links to its keys; the filtered list holds this key.
    await page.getByRole('link', { name: 'CI deploy (service account)' }).click();
    await page.getByRole('heading', { name: 'CI deploy', level: 1 }).waitFor();
    // service-account-page-unsaveable: the user page required an e-mail address a service account
    // cannot have (API §22), so its form could never be saved; the address, the reset-password and
    // second-factor controls are gone for it and a rename saves.
    assert.equal(await page.locator('#e-email').isVisible(), false);
    assert.equal(await page.locator('#reset-password').isVisible(), false);
    assert.equal(await page.locator('#reset-mfa').isVisible(), false);
    await page.locator('#e-name').fill('CI deploy bot');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'The changes were saved.' }).waitFor();
    const renamed = await stack.adminApi('GET', `/api/v1/users/${accountId}`);
    assert.equal((renamed.body as { name: string; email: null }).name, 'CI deploy bot');
    assert.equal((renamed.body as { email: null }).email, null);
    await page.locator('#e-name').fill('CI deploy');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'CI deploy', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'API keys of this user' }).click();
    await page.getByText('Keys of CI deploy (service account), newest first. Page 1.').waitFor();
    await page.getByRole('cell', { name: 'ci-deploy', exact: true }).waitFor();

    // Revoked by the keyboard: the row's button, the dialog (focus starts on Cancel), "Revoke key".
    await page
      .getByRole('button', { name: 'Revoke the key ci-deploy of CI deploy (service account)' })
      .focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'confirm-no');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Revoke key');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'The key ci-deploy was revoked.' }).waitFor();
    await page.getByRole('cell', { name: 'This owner has no keys.' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'keys-title');
    const refused = await withKey(stack, key, 'GET', '/api/v1/users?kind=service');
    assert.equal(refused.status, 401);
    assert.equal((refused.body as { code: string }).code, 'token_invalid');
    assertClean(tab);
  });

  it("an organization's key for verification, made by slug and reached from the organization", async () => {
    const org = await stack.adminApi('POST', '/api/v1/organizations', { name: 'Initech', slug: 'initech' });
    assert.equal(org.status, 201);
    const orgId = (org.body as { id: string }).id;
    const tab = await openTab(stack);
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    await page.goto(`${stack.origin}/admin#/organizations/${orgId}`);
    await page.getByRole('heading', { name: 'Initech', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'API keys of this organization' }).click();
    await page.getByRole('cell', { name: 'This owner has no keys.' }).waitFor();
    // The list's owner is the new key's owner; the slug names it as well as the id.
    const create = page.locator('#key-create');
    assert.equal(await create.locator('#key-owner-type').inputValue(), 'organization');
    await create.getByLabel('Owner', { exact: true }).fill('initech');
    await create.getByLabel('Name of the key').fill('gateway');
    await create.getByLabel('api_keys:verify', { exact: true }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#keys-secret').getByRole('heading', { name: 'The new key' }).waitFor();
    const key = ((await page.locator('#keys-secret code').textContent()) ?? '').trim();
    assert.match(key, /^gate_/);
    await page.getByRole('link', { name: 'Initech' }).waitFor();
    const verified = await stack.adminApi('POST', '/api/v1/api-keys/verify', { key });
    assert.equal((verified.body as { valid: boolean }).valid, true);
    assert.equal((verified.body as { owner: { id: string } }).owner.id, orgId);

    // A name that matches nothing is said so, and nothing is made.
    await create.getByLabel('Owner', { exact: true }).fill('no-such-org');
    await create.getByLabel('Name of the key').fill('other');
    await page.getByRole('button', { name: 'Create key' }).click();
    await create
      .getByRole('alert')
      .filter({ hasText: 'No such user, service account or organization.' })
      .waitFor();
    // No scope and not "everything": the form says what is missing.
    await create.getByLabel('Owner', { exact: true }).fill('initech');
    await create.getByLabel('api_keys:verify', { exact: true }).uncheck();
    await page.getByRole('button', { name: 'Create key' }).click();
    await create.getByRole('alert').filter({ hasText: 'Check at least one scope' }).waitFor();
    const keys = await stack.adminApi('GET', `/api/v1/api-keys?owner=organization:${orgId}`);
    assert.equal((keys.body as { data: unknown[] }).data.length, 1);
    await assertAccessible(page, 'the console API keys of an organization');
    assertClean(tab);
  });

  it('keyset pages of 25, one list call each with the previous cursor; the owner filter by e-mail address', async () => {
    const person = await stack.adminApi('POST', '/api/v1/users', {
      email: 'many-keys@pages.test',
      password: 'a long passphrase for many keys 1',
    });
    assert.equal(person.status, 201);
    const personId = (person.body as { id: string }).id;
    for (let i = 1; i <= 26; i++) {
      const made = await stack.adminApi('POST', '/api/v1/api-keys', {
        name: `bulk-${String(i).padStart(2, '0')}`,
        user_id: personId,
        scopes: ['users:read'],
      });
      assert.equal(made.status, 201);
    }
    const tab = await openTab(stack);
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    const calls = recordApiCalls(page);
    await page.goto(`${stack.origin}/admin#/keys`);
    await page.getByText('Every key, newest first. Page 1.').waitFor();
    assert.equal(await page.locator('#keys-body tr').count(), 25);
    // Newest first: the last one made heads the list.
    assert.equal(await page.locator('#keys-body tr').first().locator('td').first().textContent(), 'bulk-26');
    await page.locator('#keys-next').click();
    await page.getByText('Every key, newest first. Page 2.').waitFor();
    const lists = calls.filter((c) => c.method === 'GET' && c.url.pathname === '/api/v1/api-keys');
    const [first, second] = lists.slice(-2);
    assert.equal(first?.url.searchParams.get('limit'), '25');
    assert.equal(first?.url.searchParams.get('cursor'), null);
    assert.equal(second?.url.searchParams.get('limit'), '25');
    assert.ok(
      second?.url.searchParams.get('cursor'),
      'the second page is asked with the cursor of the first',
    );
    assert.ok((await page.locator('#keys-body tr').count()) >= 1);

    // The filter takes the owner's e-mail address and lists only their keys.
    // "Any owner" with an e-mail address: the address names a user.
    assert.equal(await page.locator('#keys-owner-type').inputValue(), '');
    await page.locator('#keys-owner').fill('many-keys@pages.test');
    await page.getByRole('button', { name: 'Show keys' }).click();
    await page.getByText('Keys of many-keys@pages.test, newest first. Page 1.').waitFor();
    assert.equal(new URL(page.url()).hash, `#/keys?owner=${encodeURIComponent(`user:${personId}`)}`);
    assert.equal(await page.locator('#keys-body tr').count(), 25);
    await page.locator('#keys-next').click();
    await page.getByText('Keys of many-keys@pages.test, newest first. Page 2.').waitFor();
    assert.equal(await page.locator('#keys-body tr').count(), 1);
    assert.equal(await page.locator('#keys-body tr td').first().textContent(), 'bulk-01');
    const owned = calls.filter((c) => c.url.pathname === '/api/v1/api-keys').at(-1);
    assert.equal(owned?.url.searchParams.get('owner'), `user:${personId}`);
    assertClean(tab);
  });

  it('with api_keys off neither the console nor /account shows keys, and a bookmark opens the users', async () => {
    const off = await stack.adminApi('PUT', '/api/v1/admin/modules/api_keys', { enabled: false });
    assert.equal(off.status, 200);
    try {
      const tab = await openTab(stack);
      const { page } = tab;
      await signInToConsole(page, stack.origin);
      await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      assert.equal(await page.locator('#nav-keys').isHidden(), true);
      await page.goto(`${stack.origin}/admin#/keys`);
      await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      assert.equal(await page.locator('#view-keys').isHidden(), true);
      await page.goto(`${stack.origin}/account`);
      await page.getByRole('heading', { name: 'Profile' }).waitFor();
      assert.equal(await page.locator('#keys-section').isHidden(), true);
      assertClean(tab);
    } finally {
      await stack.adminApi('PUT', '/api/v1/admin/modules/api_keys', { enabled: true });
    }
  });
});
