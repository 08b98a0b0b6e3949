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
  totp,
} from './harness.ts';

const GRACE = 'grace@pages.test';
const GRACE_PASSWORD = 'the first long passphrase of hopper';
const GRACE_NEW = 'a second passphrase chosen on the reset page';
const HEDY = 'hedy@pages.test';
const HEDY_PASSWORD = 'frequency hopping spread spectrum';
const HEDY_NEW = 'a new passphrase after the reset link';
const ALAN = 'alan@pages.test';
const ALAN_PASSWORD = 'turing machines halt sometimes 1936';

interface User {
  id: string;
  email: string;
  email_verified: boolean;
}

describe('hosted pages in Chromium: forgot/reset password, verify and change e-mail', {
  skip: skipWithoutChromium || apiNotBuilt('recovery', 'email'),
}, () => {
  let stack: Stack;
  const nextMail = (to: string, path: string) => linkFromMail(stack.smtp, to, path);
  const userById = async (id: string) => (await stack.adminApi('GET', `/api/v1/users/${id}`)).body as User;

  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  it('forgot → mail → reset page (sets the password only on submit) → sign-in with the new password', async () => {
    const created = await stack.adminApi('POST', '/api/v1/users', { email: GRACE, password: GRACE_PASSWORD });
    assert.equal(created.status, 201);

    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(`${stack.origin}/account/sign-in`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.waitForURL(`${stack.origin}/account/forgot-password`);
    await assertAccessible(page, 'the forgot-password page');
    await screenshot(page, 'forgot-password-desktop-light');
    await page.getByLabel('E-mail address').fill(GRACE);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('status').filter({ hasText: 'If an account exists for this address' }).waitFor();

    const link = await nextMail(GRACE, '/account/reset-password/');
    await page.goto(link);
    await page.getByLabel('E-mail address').and(page.locator('[readonly]')).waitFor();
    assert.equal(await page.getByLabel('E-mail address').inputValue(), GRACE);
    await assertAccessible(page, 'the reset-password page');
    await screenshot(page, 'reset-password-desktop-light');
    // Opening the page changed nothing: the old password still works.
    const stillOld = await fetch(`${stack.origin}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: GRACE, password: GRACE_PASSWORD }),
    });
    assert.equal(stillOld.status, 200);

    await page.getByLabel('New password').fill('short');
    await page.getByLabel('Type it again').fill('short');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /at least 15/i })
      .waitFor();

    await page.getByLabel('New password').fill(GRACE_NEW);
    await page.getByLabel('Type it again').fill(GRACE_NEW);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password was changed' }).waitFor();
    await page.getByRole('link', { name: 'Go to sign-in' }).click();
    await signInWithPassword(page, stack.origin, GRACE, GRACE_NEW);

    // The link is spent: opening it again says so.
    await page.goto(link);
    await page.getByRole('alert').filter({ hasText: 'This link is not valid any more' }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });

  it('forgot → mail → reset with a second factor → sign-in with a TOTP code', {
    skip: apiNotBuilt('mfa'),
  }, async () => {
    assert.equal(
      (await stack.adminApi('POST', '/api/v1/users', { email: HEDY, password: HEDY_PASSWORD })).status,
      201,
    );
    // Hedy turns TOTP on through the API.
    const call = async (path: string, body: unknown, token?: string) => {
      const res = await fetch(`${stack.origin}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const login = await call('/api/v1/login', { email: HEDY, password: HEDY_PASSWORD });
    const token = login.body.access_token as string;
    const enrolment = await call('/api/v1/mfa/totp', { current_password: HEDY_PASSWORD }, token);
    const secret = enrolment.body.secret as string;
    const confirmed = await call('/api/v1/mfa/totp/confirm', { code: totp(secret) }, token);
    assert.equal(confirmed.status, 200);
    const codes = confirmed.body.recovery_codes as string[];

    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(`${stack.origin}/account/forgot-password`);
    await page.getByLabel('E-mail address').fill(HEDY);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('status').filter({ hasText: 'If an account exists for this address' }).waitFor();
    await page.goto(await nextMail(HEDY, '/account/reset-password/'));
    const code = page.getByLabel('Code from your authenticator app, or a recovery code');
    await code.waitFor();
    await page.getByLabel('New password').fill(HEDY_NEW);
    await page.getByLabel('Type it again').fill(HEDY_NEW);
    await code.fill('wrong-code');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('alert').filter({ hasText: 'That code is not correct' }).waitFor();
    await code.fill(codes[0] as string);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password was changed' }).waitFor();

    await page.goto(`${stack.origin}/account/sign-in`);
    await page.getByLabel('E-mail address').fill(HEDY);
    await page.getByLabel('Password', { exact: true }).fill(HEDY_NEW);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // The next time step: the one used to confirm is spent (no replay); one step of drift is accepted.
    await page.getByLabel('Code from your authenticator app').fill(totp(secret, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByText(HEDY, { exact: true }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });

  it('verify-email link: the page confirms on a click, never on load', async () => {
    const created = await stack.adminApi('POST', '/api/v1/users', { email: ALAN, password: ALAN_PASSWORD });
    const alan = created.body as User;
    assert.equal(alan.email_verified, false);

    const tab = await openTab(stack, { phone: true });
    const { page } = tab;
    await signInWithPassword(page, stack.origin, ALAN, ALAN_PASSWORD);
    await page.getByText('not confirmed', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Send a confirmation link' }).click();
    await page.getByRole('status').filter({ hasText: 'We sent a confirmation link' }).waitFor();

    const link = await nextMail(ALAN, '/account/verify-email/');
    const other = await openTab(stack);
    await other.page.goto(link);
    await other.page.getByText(`Confirm that ${ALAN} is your address.`).waitFor();
    await assertAccessible(other.page, 'the verify-email page');
    await screenshot(other.page, 'verify-email-phone-light');
    assert.equal((await userById(alan.id)).email_verified, false, 'loading the page confirmed nothing');

    await other.page.getByRole('button', { name: 'Confirm my address' }).click();
    await other.page
      .getByRole('status')
      .filter({ hasText: `${ALAN} is confirmed` })
      .waitFor();
    assert.equal((await userById(alan.id)).email_verified, true);
    assertClean(other);
    await other.context.close();
    assertClean(tab);
    await tab.context.close();
  });

  it('change e-mail on /account: a link to the new address, confirmed on its page', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await signInWithPassword(page, stack.origin, ALAN, ALAN_PASSWORD);
    await page.getByLabel('New e-mail address').fill('alan.turing@pages.test');
    // A fresh proof (docs/api.md §16): without one the page asks for it and sends nothing.
    const emailForm = page.locator('#email-form');
    await emailForm.getByRole('button', { name: 'Send a link to the new address' }).click();
    await emailForm.getByRole('alert').filter({ hasText: 'Confirm it is you' }).waitFor();
    await page.locator('#email-password').fill(ALAN_PASSWORD);
    await page.getByRole('button', { name: 'Send a link to the new address' }).click();
    await page.getByRole('status').filter({ hasText: 'Check the new mailbox' }).waitFor();

    const link = await nextMail('alan.turing@pages.test', '/account/verify-email/');
    await page.goto(link);
    await page.getByText('Confirm alan.turing@pages.test as the new address').waitFor();
    await page.getByRole('button', { name: 'Confirm the new address' }).click();
    await page.getByRole('status').filter({ hasText: 'alan.turing@pages.test is confirmed' }).waitFor();
    // The change ended every session: /account asks to sign in again, with the new address.
    await page.goto(`${stack.origin}/account`);
    await page.waitForURL(/\/account\/sign-in/);
    await signInWithPassword(page, stack.origin, 'alan.turing@pages.test', ALAN_PASSWORD);
    assertClean(tab);
    await tab.context.close();
  });
});
