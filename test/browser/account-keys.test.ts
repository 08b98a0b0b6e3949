import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  signInWithPassword,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

// /account's API keys (docs/api-keys.md, API §22) in Chromium: a person makes a key for themself by
// the keyboard, sees it once, uses it on /api/v1 as themself within its scope, and revokes it; the
// section works right to left in Arabic. Neither offers api_keys:verify to a person.

const PERSON = 'keyholder@pages.test';
const PASSWORD = 'a keyholder passphrase 12345';

async function profileWith(stack: Stack, key: string) {
  const res = await fetch(`${stack.origin}/api/v1/profile`, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe('/account in Chromium: the person’s own API keys', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
    const made = await stack.adminApi('POST', '/api/v1/users', {
      email: PERSON,
      name: 'Key Holder',
      password: PASSWORD,
    });
    assert.equal(made.status, 201);
  });
  after(async () => {
    await stack?.close();
  });

  it('create by keyboard → shown once → works as the person → revoked → refused', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await signInWithPassword(page, stack.origin, PERSON, PASSWORD);
    const section = page.locator('#keys-section');
    await section.getByRole('heading', { name: 'API keys', level: 2 }).waitFor();
    await section.getByText('You have no API keys.').waitFor();
    // A person is never offered api_keys:verify (only an admin may give it, API §22).
    await section.getByLabel('auth:read', { exact: true }).waitFor();
    assert.equal(await section.getByLabel('api_keys:verify', { exact: true }).count(), 0);

    // The keyboard path: name, Space on a scope, Enter in the name field submits.
    await section.getByLabel('Name of the key').focus();
    await page.keyboard.type('backup script');
    await section.getByLabel('auth:read', { exact: true }).focus();
    await page.keyboard.press('Space');
    assert.equal(await section.getByLabel('auth:read', { exact: true }).isChecked(), true);
    await section.getByLabel('Name of the key').focus();
    await page.keyboard.press('Enter');
    const panel = page.locator('#key-secret');
    await panel.getByRole('heading', { name: 'Your new key' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'The key backup script was created.' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'key-secret-title');
    await panel.getByText('Copy it now: you will not see it again.').waitFor();
    const key = ((await panel.locator('code').textContent()) ?? '').trim();
    assert.match(key, /^gate_[0-9A-Za-z]{38}$/);
    assert.equal(await panel.locator('code').getAttribute('dir'), 'ltr');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Copy');
    await page.keyboard.press('Enter');
    await panel.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
    await section.getByText('backup script').first().waitFor();
    await section.getByText('Scopes: auth:read').waitFor();
    await assertAccessible(page, '/account with an API key shown');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'I have stored it');
    await page.keyboard.press('Enter');
    assert.equal(await panel.isHidden(), true);
    assert.equal(await panel.locator('code').textContent(), '');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'keys-title');

    // The key acts as the person, within its scope.
    const profile = await profileWith(stack, key);
    assert.equal(profile.status, 200);
    assert.equal((profile.body as { email: string }).email, PERSON);
    const listed = await fetch(`${stack.origin}/api/v1/users`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(listed.status, 403);

    // Revoked from the list (the browser's confirmation), then refused at once.
    page.once('dialog', (dialog) => {
      assert.match(dialog.message(), /Revoke the key backup script\?/);
      dialog.accept();
    });
    await section.getByRole('button', { name: 'Revoke the key backup script' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'The key backup script was revoked.' }).waitFor();
    await section.getByText('You have no API keys.').waitFor();
    assert.equal((await profileWith(stack, key)).status, 401);
    await assertAccessible(page, '/account with its API keys section');
    assertClean(tab);
  });

  it('in Arabic the section reads right to left and a key is made and shown', async () => {
    const tab = await openTab(stack, { phone: true });
    const { page } = tab;
    await signInWithPassword(page, stack.origin, PERSON, PASSWORD);
    await page.goto(`${stack.origin}/account?lang=ar`);
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    const section = page.locator('#keys-section');
    await section.getByRole('heading', { name: 'مفاتيح API', level: 2 }).waitFor();
    assert.equal(await section.evaluate((s) => getComputedStyle(s).direction), 'rtl');
    await section.getByText('ليست لديك مفاتيح API.').waitFor();
    await section.getByLabel('اسم المفتاح').fill('نسخ احتياطي');
    await section.getByRole('button', { name: 'إنشاء المفتاح' }).click();
    await section.getByRole('alert').filter({ hasText: 'حدّد نطاقًا واحدًا على الأقل' }).waitFor();
    await section.getByLabel('auth:read', { exact: true }).check();
    await section.getByRole('button', { name: 'إنشاء المفتاح' }).click();
    await page.locator('#key-secret').getByRole('heading', { name: 'مفتاحك الجديد' }).waitFor();
    assert.match((await page.locator('#key-secret code').textContent()) ?? '', /^gate_/);
    assert.equal(await page.locator('#key-expires').getAttribute('dir'), 'ltr');
    assert.match((await page.locator('#key-expires-hint').textContent()) ?? '', /365/);
    await section.getByText('نسخ احتياطي').first().waitFor();
    // Nothing of the section runs out of a phone's width.
    const overflow = await section.evaluate((s) => s.scrollWidth - s.clientWidth);
    assert.ok(overflow <= 1, `the section overflows by ${overflow}px`);
    await assertAccessible(page, '/account API keys in Arabic');
    assertClean(tab);
  });
});
