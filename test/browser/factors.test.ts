import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  apiNotBuilt,
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  screenshot,
  signInWithPassword,
  skipWithoutChromium,
  startStack,
  totp,
} from './harness.ts';
import { addVirtualAuthenticator, withoutPasskeyAutofill } from './passkey-support.ts';

const LIN = 'lin@pages.test';
const LIN_PASSWORD = 'second factors make sign-in safer 2fa';

async function passwordStep(page: Page, origin: string, email: string, password: string) {
  await page.goto(`${origin}/account/sign-in`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

describe('hosted pages in Chromium: TOTP, recovery codes, passkeys, sessions', {
  skip: skipWithoutChromium || apiNotBuilt('mfa', 'passkeys', 'sessions'),
}, () => {
  let stack: Stack;
  let secret = '';
  let recoveryCodes: string[] = [];

  before(async () => {
    stack = await startStack();
    const created = await stack.adminApi('POST', '/api/v1/users', { email: LIN, password: LIN_PASSWORD });
    assert.equal(created.status, 201);
  });
  after(async () => {
    await stack?.close();
  });

  it('TOTP: enrol on /account with the QR code, keep the recovery codes, then sign in with a code', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await signInWithPassword(page, stack.origin, LIN, LIN_PASSWORD);
    await page.getByText('No authenticator app is set up.').waitFor();
    await page.locator('#totp-password').fill(LIN_PASSWORD);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    await qr.waitFor();
    // The SVG from the API is shown as an image (blob: URL), allowed by img-src and nothing else.
    await page.waitForFunction(
      () => (document.querySelector('#totp-qr') as HTMLImageElement).naturalWidth > 0,
    );
    assert.match((await qr.getAttribute('src')) ?? '', /^blob:/);
    secret = (await page.locator('#totp-secret').textContent()) ?? '';
    assert.match(secret, /^[A-Z2-7]{32}$/);
    await assertAccessible(page, '/account with the TOTP enrolment');
    await screenshot(page, 'account-totp-desktop-light');

    await page.getByLabel('Code from the app', { exact: true }).fill(totp(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('heading', { name: 'Your new recovery codes' }).waitFor();
    recoveryCodes = await page.locator('#codes-list li').allTextContents();
    assert.equal(recoveryCodes.length, 10);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'codes-shown-title');
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText(/An authenticator app is on since/).waitFor();
    await page.getByText('10 of 10 recovery codes left.').waitFor();

    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${stack.origin}/account/sign-in`);
    await passwordStep(page, stack.origin, LIN, LIN_PASSWORD);
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'code', 'focus moves to the code');
    await assertAccessible(page, 'the second-factor step');
    await screenshot(page, 'sign-in-mfa-desktop-light');
    await page.keyboard.type('000000');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'That code is not correct' }).waitFor();
    // The next time step: the one confirmed is spent (no replay), drift of one step is accepted.
    await page.getByLabel('Code from your authenticator app').fill(totp(secret, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByText(LIN, { exact: true }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });

  it('passkeys: sign in with a recovery code, add a passkey (virtual authenticator), sign in with it alone', async () => {
    assert.equal(recoveryCodes.length, 10, 'runs after the TOTP test');
    const tab = await openTab(stack);
    const { page } = tab;
    await addVirtualAuthenticator(tab);
    await passwordStep(page, stack.origin, LIN, LIN_PASSWORD);
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await page.getByLabel('Recovery code').fill(recoveryCodes[0] as string);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByText('9 of 10 recovery codes left.').waitFor();

    await page.getByLabel('Name for the new passkey').fill('Test laptop');
    await page.locator('#passkey-password').fill(LIN_PASSWORD);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'Test laptop was added.' }).waitFor();
    await page.locator('#passkeys-list').getByText('Test laptop').waitFor();
    await assertAccessible(page, '/account with a passkey');
    await screenshot(page, 'account-desktop-light');

    // Autofill (conditional mediation): the sign-in page's pending request is answered by the
    // authenticator as soon as the page opens, and signs in.
    const signOut = async () => {
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(/\/account\/sign-in$/);
    };
    await signOut();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByText(LIN, { exact: true }).waitFor();

    // The button, in a browser without autofill for passkeys (the page then starts no conditional
    // request): signs in with the passkey alone.
    await withoutPasskeyAutofill(tab);
    await signOut();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByText(LIN, { exact: true }).waitFor();

    // The passkey also answers the second-factor step after a password.
    await signOut();
    await passwordStep(page, stack.origin, LIN, LIN_PASSWORD);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL(`${stack.origin}/account`);
    assertClean(tab);
    await tab.context.close();
  });

  it('fresh proofs on /account (docs/api.md §16): new codes with a code, a passkey removed with a passkey, the app turned off with the password', async () => {
    assert.equal(recoveryCodes.length, 10, 'runs after the TOTP and passkey tests');
    const tab = await openTab(stack);
    const { page } = tab;
    await addVirtualAuthenticator(tab);
    await withoutPasskeyAutofill(tab);
    await passwordStep(page, stack.origin, LIN, LIN_PASSWORD);
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await page.getByLabel('Recovery code').fill(recoveryCodes[1] as string);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByText('8 of 10 recovery codes left.').waitFor();

    // No proof: the page asks for one and sends nothing.
    const codesForm = page.locator('#codes-form');
    await codesForm.getByRole('button', { name: 'Make new recovery codes' }).click();
    await codesForm.getByRole('alert').filter({ hasText: 'Confirm it is you' }).waitFor();
    await page.getByText('8 of 10 recovery codes left.').waitFor();
    // A recovery code as the proof.
    await codesForm.getByLabel('Code from the app or a recovery code').fill(recoveryCodes[2] as string);
    await codesForm.getByRole('button', { name: 'Make new recovery codes' }).click();
    await page.getByRole('heading', { name: 'Your new recovery codes' }).waitFor();
    recoveryCodes = await page.locator('#codes-list li').allTextContents();
    assert.equal(recoveryCodes.length, 10);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('10 of 10 recovery codes left.').waitFor();

    // This browser's authenticator gets a passkey; it proves the removal of the other one.
    await page.getByLabel('Name for the new passkey').fill('Proof key');
    await page.locator('#passkey-password').fill(LIN_PASSWORD);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.locator('#passkeys-list').getByText('Proof key').waitFor();
    await page.getByRole('button', { name: 'Remove Test laptop' }).click();
    const removal = page.locator('#passkey-remove-form');
    await page.getByRole('heading', { name: 'Remove Test laptop' }).waitFor();
    await assertAccessible(page, '/account asking for a fresh proof');
    await removal.getByRole('button', { name: 'Use a passkey instead' }).click();
    await page.getByRole('status').filter({ hasText: 'Test laptop was removed.' }).waitFor();
    await page.locator('#passkeys-list').getByText('Test laptop').waitFor({ state: 'detached' });

    // A wrong password is refused; the right one removes the last passkey.
    await page.getByRole('button', { name: 'Remove Proof key' }).click();
    await removal.getByLabel('Current password').fill('not the password at all');
    await removal.getByRole('button', { name: 'Remove the passkey' }).click();
    await removal
      .getByRole('alert')
      .filter({ hasText: /not correct/ })
      .waitFor();
    await removal.getByLabel('Current password').fill(LIN_PASSWORD);
    await removal.getByRole('button', { name: 'Remove the passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'Proof key was removed.' }).waitFor();
    await page.getByText('No passkeys yet.').waitFor();

    // The authenticator app, turned off with the password.
    const off = page.locator('#totp-off-form');
    await off.getByLabel('Or your current password').fill(LIN_PASSWORD);
    await off.getByRole('button', { name: 'Turn off' }).click();
    await page.getByRole('status').filter({ hasText: 'The authenticator app was turned off.' }).waitFor();
    await page.getByText('No authenticator app is set up.').waitFor();
    assertClean(tab);
    await tab.context.close();
  });

  it('sessions: /account lists them and signs out another one', async () => {
    // Another device: a session made through the API with its own user agent.
    const other = await fetch(`${stack.origin}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'OtherDevice/1.0' },
      body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    const { refresh_token } = (await other.json()) as { refresh_token: string };

    const tab = await openTab(stack, { dark: true });
    const { page } = tab;
    await signInWithPassword(page, stack.origin, ADMIN_EMAIL, ADMIN_PASSWORD);
    const sessions = page.locator('#sessions-list');
    await sessions.getByText('this browser').waitFor();
    await sessions.getByText(/OtherDevice\/1\.0/).waitFor();
    // A person reads "Chrome on Linux", not the raw User-Agent header (an unknown one stays as is).
    await sessions.getByText(/^Chrome on Linux · /).waitFor();
    await assertAccessible(page, '/account (dark) with sessions');
    await screenshot(page, 'account-desktop-dark');

    await page.getByRole('button', { name: /^Sign out OtherDevice\/1\.0/ }).click();
    await page.getByRole('status').filter({ hasText: 'That session was signed out.' }).waitFor();
    // The list is drawn again after the status is announced: wait for the row to go (it must).
    await sessions.getByText(/OtherDevice\/1\.0/).waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(await sessions.getByText(/OtherDevice\/1\.0/).count(), 0);
    const dead = await fetch(`${stack.origin}/api/v1/refresh-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token }),
    });
    assert.equal(dead.status, 401, "the other device's session is over");
    // This browser is still signed in.
    await page.reload();
    await page.getByText(ADMIN_EMAIL, { exact: true }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });
});
