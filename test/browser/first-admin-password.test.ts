import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { DIALECTS } from '../helpers/databases.ts';
import {
  assertAccessible,
  assertClean,
  launchBrowser,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

const NEW_PASSWORD = 'my own passphrase for the console';
let browser: Browser | undefined;

after(async () => {
  await browser?.close();
});

for (const dialect of DIALECTS) {
  describe(`hosted pages in Chromium: the generated first-admin password (${dialect})`, {
    skip: skipWithoutChromium,
  }, () => {
    let stack: Stack;
    let generated: string;
    before(async () => {
      browser ??= await launchBrowser();
      // No ADMIN_EMAIL: the first start creates admin@example.com and prints its password once.
      stack = await startStack({ ADMIN_EMAIL: '', ADMIN_PASSWORD: '' }, { dialect, browser });
      const line = stack.service
        .output()
        .split('\n')
        .filter((l) => l.includes('generated_password'))
        .map((l) => JSON.parse(l) as { generated_password: string })[0];
      assert.ok(line, 'the first start printed a generated password');
      generated = line.generated_password;
    });
    after(async () => {
      await stack?.close();
    });

    /* generated-password-kept: the console's sign-in with the printed password let the admin in
       and the password stayed (ASVS 5.0 6.4.1); now the page asks for a new one and signs in with it. */
    it('the console sign-in with the printed password asks for a new one, then opens the console', async () => {
      const tab = await openTab(stack);
      const { page } = tab;
      await page.goto(`${stack.origin}/admin`);
      await page.waitForURL(`${stack.origin}/account/sign-in?next=/admin`);
      await page.getByLabel('E-mail address').fill('admin@example.com');
      await page.getByLabel('Password', { exact: true }).fill(generated);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();

      const heading = page.getByRole('heading', { name: 'Choose your own password' });
      await heading.waitFor();
      assert.equal(new URL(page.url()).pathname, '/account/sign-in', 'not signed in yet');
      await assertAccessible(page, 'the sign-in page, a generated password to replace');
      const input = page.getByLabel('New password');
      assert.equal(await input.evaluate((el) => el === document.activeElement), true, 'focus on the field');
      // A weak one is refused on the page, and nothing is signed in.
      await input.fill('short');
      await page.getByRole('button', { name: 'Set the password and sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'at least' }).waitFor();
      await input.fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Set the password and sign in' }).click();
      await page.waitForURL(`${stack.origin}/admin`);
      await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
      assertClean(tab);
      await tab.context.close();

      // The printed password opens nothing now; the new one signs in.
      const login = (password: string) =>
        fetch(`${stack.origin}/api/v1/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'admin@example.com', password }),
        });
      assert.equal((await login(generated)).status, 401);
      assert.equal((await login(NEW_PASSWORD)).status, 200);
    });
  });
}
