import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  apiNotBuilt,
  assertAccessible,
  assertClean,
  linkFromMail,
  openTab,
  type Stack,
  screenshot,
  signInWithPassword,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

const MARY = 'mary@pages.test';
const MARY_PASSWORD = 'the difference engine needs a printer';

// Gap: with `registration` on, people could only sign up through the JSON API; the hosted
// sign-in page offered no way to create an account (a hosted sign-up page, linked from sign-in).
describe('hosted pages in Chromium: sign-up page (registration)', {
  skip: skipWithoutChromium || apiNotBuilt('registration', 'email'),
}, () => {
  let stack: Stack;

  before(async () => {
    stack = await startStack({ REQUIRE_VERIFIED_EMAIL: 'true' });
  });
  after(async () => {
    await stack?.close();
  });

  it('while registration is off: no link on the sign-in page, and the sign-up page is 404', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(`${stack.origin}/account/sign-in`);
    assert.equal(await page.getByRole('link', { name: 'Create an account' }).count(), 0);
    const res = await fetch(`${stack.origin}/account/sign-up`);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { code: string }).code, 'module_disabled');
    assertClean(tab);
    await tab.context.close();
  });

  it('sign-in → "Create an account" → the mail → confirm → sign-in with the chosen password', async () => {
    const toggled = await stack.adminApi('PUT', '/api/v1/admin/modules/registration', { enabled: true });
    assert.equal(toggled.status, 200);

    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(`${stack.origin}/account/sign-in`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.waitForURL(`${stack.origin}/account/sign-up`);
    await assertAccessible(page, 'the sign-up page');
    await screenshot(page, 'sign-up-desktop-light');

    await page.getByLabel('Your name').fill('Mary Somerville');
    await page.getByLabel('E-mail address').fill(MARY);
    await page.getByLabel('Choose a password').fill(MARY_PASSWORD);
    await page.getByLabel('Type it again').fill('not the same passphrase at all here');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').filter({ hasText: 'The two passwords do not match.' }).waitFor();

    await page.getByLabel('Type it again').fill(MARY_PASSWORD);
    await page.getByLabel('Type it again').press('Enter');
    await page.getByRole('status').filter({ hasText: 'Check your inbox to confirm your address.' }).waitFor();
    assert.equal(await page.locator('#sign-up-form').isHidden(), true, 'the form is gone once sent');

    const link = await linkFromMail(stack.smtp, MARY, '/account/verify-email/');
    await page.goto(link);
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${MARY} is confirmed` })
      .waitFor();

    await signInWithPassword(page, stack.origin, MARY, MARY_PASSWORD);
    assertClean(tab);
    await tab.context.close();
  });

  it('a weak password is refused on the page with the API sentence, and the form stays to try again', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(`${stack.origin}/account/sign-up`);
    await page.getByLabel('E-mail address').fill('weak@pages.test');
    await page.getByLabel('Choose a password').fill('password');
    await page.getByLabel('Type it again').fill('password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /password/i })
      .waitFor();
    assert.equal(await page.locator('#sign-up-form').isVisible(), true);
    assertClean(tab);
    await tab.context.close();
  });
});
