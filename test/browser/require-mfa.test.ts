import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { DIALECTS } from '../helpers/databases.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  apiNotBuilt,
  assertAccessible,
  assertClean,
  launchBrowser,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
  totp,
} from './harness.ts';

let browser: Browser | undefined;
after(async () => {
  await browser?.close();
});

/* require-mfa-sign-in-page: with REQUIRE_MFA an admin without a factor met a bare refusal on the
   hosted sign-in page; now the page enrols an authenticator app with the enrolment-only token and
   the password just typed, and the next sign-in asks for the new factor (docs/mfa.md). */
for (const dialect of DIALECTS) {
  describe(`hosted pages in Chromium: REQUIRE_MFA=admins leads an admin through enrolment (${dialect})`, {
    skip: skipWithoutChromium || apiNotBuilt('mfa'),
  }, () => {
    let stack: Stack;
    before(async () => {
      browser ??= await launchBrowser();
      stack = await startStack({ REQUIRE_MFA: 'admins' }, { dialect, browser });
    });
    after(async () => {
      await stack?.close();
    });

    it('sign-in → set up the authenticator app → recovery codes → sign in with the new factor', async () => {
      const tab = await openTab(stack);
      const { page } = tab;
      await page.goto(`${stack.origin}/account/sign-in`);
      await page.getByLabel('E-mail address').fill(ADMIN_EMAIL);
      await page.getByLabel('Password', { exact: true }).fill(ADMIN_PASSWORD);
      await page.getByLabel('Password', { exact: true }).press('Enter');
      const heading = page.getByRole('heading', { name: 'Set up two-step verification' });
      await heading.waitFor();
      assert.equal(await heading.evaluate((el) => el === document.activeElement), true);
      assert.equal(new URL(page.url()).pathname, '/account/sign-in', 'not signed in');
      await page.waitForFunction(
        () => (document.querySelector('#enrol-qr') as HTMLImageElement).naturalWidth > 0,
      );
      await assertAccessible(page, 'the sign-in page, enrolment step');
      const secret = (await page.locator('#enrol-secret').textContent()) ?? '';
      assert.match(secret, /^[A-Z2-7]{32}$/);

      await page.getByLabel('Code from the app').fill(totp(secret));
      await page.getByRole('button', { name: 'Turn on two-step verification' }).click();
      await page.getByRole('heading', { name: 'Two-step verification is on' }).waitFor();
      assert.equal(await page.locator('#enrol-codes li').count(), 10);

      await page.getByRole('link', { name: 'Sign in with your new factor' }).click();
      await page.getByLabel('E-mail address').fill(ADMIN_EMAIL);
      await page.getByLabel('Password', { exact: true }).fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Two-step verification', exact: true }).waitFor();
      // The next time step: the one just used to confirm is spent (no replay, API §13).
      await page.getByLabel('Code from your authenticator app').fill(totp(secret, Date.now() + 30_000));
      await page.getByLabel('Code from your authenticator app').press('Enter');
      await page.waitForURL(`${stack.origin}/account`);
      await page.getByRole('heading', { name: 'Profile' }).waitFor();
      assertClean(tab);
      await tab.context.close();
    });
  });
}
