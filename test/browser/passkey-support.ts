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
