import type { Page } from 'playwright-core';
import type { Tab } from './harness.ts';

/** Chromium's virtual authenticator (DevTools WebAuthn domain): a platform passkey that verifies the user. */
export async function addVirtualAuthenticator(tab: Tab): Promise<void> {
  const cdp = await tab.context.newCDPSession(tab.page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}

/**
 * Makes the page's browser report no autofill for passkeys, so the sign-in page starts no
 * conditional request (which the virtual authenticator would answer at once, signing in alone).
 */
export async function withoutPasskeyAutofill(tab: Tab): Promise<void> {
  await tab.page.addInitScript(() => {
    PublicKeyCredential.isConditionalMediationAvailable = async () => false;
  });
}

/** Adds a passkey on /account (the signed-in page's form, proved by the password); waits until it is listed. */
export async function addPasskeyOnAccount(page: Page, origin: string, name: string, password: string) {
  await page.goto(`${origin}/account`);
  await page.getByLabel('Name for the new passkey').fill(name);
  await page.locator('#passkey-password').fill(password);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `${name} was added.` })
    .waitFor();
}
