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
import { addVirtualAuthenticator, withoutPasskeyAutofill } from './passkey-support.ts';

const ADA = 'ada@pages.test';
const ADA_PASSWORD = 'analytical engines weave algebraic patterns';
const ADA_NEW = 'a passphrase set with the passkey at hand';

describe('hosted pages in Chromium: password reset with a passkey', {
  skip: skipWithoutChromium || apiNotBuilt('recovery', 'mfa', 'passkeys'),
}, () => {
  let stack: Stack;

  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  it('forgot → mail → reset page with "Use a passkey" (virtual authenticator) → sign-in with the new password and the passkey', async () => {
    const created = await stack.adminApi('POST', '/api/v1/users', { email: ADA, password: ADA_PASSWORD });
    assert.equal(created.status, 201);

    const tab = await openTab(stack);
    const { page } = tab;
    await addVirtualAuthenticator(tab);
    // The sign-in page must wait for the password here, not sign in with the passkey by autofill.
    await withoutPasskeyAutofill(tab);
    await signInWithPassword(page, stack.origin, ADA, ADA_PASSWORD);
    await page.getByLabel('Name for the new passkey').fill('Reset laptop');
    await page.locator('#passkey-password').fill(ADA_PASSWORD);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'Reset laptop was added.' }).waitFor();
    // The first factor issues the recovery codes.
    await page.getByRole('heading', { name: 'Your new recovery codes' }).waitFor();
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(/\/account\/sign-in$/);

    await page.goto(`${stack.origin}/account/forgot-password`);
    await page.getByLabel('E-mail address').fill(ADA);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('status').filter({ hasText: 'If an account exists for this address' }).waitFor();
    await page.goto(await linkFromMail(stack.smtp, ADA, '/account/reset-password/'));

    const usePasskey = page.getByRole('button', { name: 'Use a passkey' });
    await usePasskey.waitFor();
    // Without TOTP the code field asks for a recovery code, beside the passkey.
    await page.getByLabel('Recovery code').waitFor();
    await assertAccessible(page, 'the reset-password page with a passkey');
    await screenshot(page, 'reset-password-passkey-desktop-light');
    await page.getByLabel('New password').fill(ADA_NEW);
    await page.getByLabel('Type it again').fill(`${ADA_NEW} typo`);
    await usePasskey.click();
    await page.getByRole('alert').filter({ hasText: 'The two passwords do not match.' }).waitFor();
    await page.getByLabel('Type it again').fill(ADA_NEW);
    await usePasskey.click();
    await page.getByRole('status').filter({ hasText: 'Your password was changed' }).waitFor();

    await page.getByRole('link', { name: 'Go to sign-in' }).click();
    await page.waitForURL(`${stack.origin}/account/sign-in`);
    await page.getByLabel('E-mail address').fill(ADA);
    await page.getByLabel('Password', { exact: true }).fill(ADA_NEW);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByText(ADA, { exact: true }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });
});
