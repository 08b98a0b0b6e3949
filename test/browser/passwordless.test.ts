import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ReceivedMail } from '../support/smtp-server.ts';
import {
  apiNotBuilt,
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  screenshot,
  skipWithoutChromium,
  startStack,
  totp,
} from './harness.ts';

const ADA = 'ada.lovelace@pages.test';
const EVE = 'eve.second@pages.test';
const EVE_PASSWORD = 'an analytical engine weaves algebra';

/** The next sign-in mail to an address that no earlier call returned, with its code and link. */
async function nextSignInMail(stack: Stack, to: string, seen: Set<ReceivedMail>) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const mail = stack.smtp.messages.find(
      (m) => m.envelope.to.includes(to) && /sign-in link and code/i.test(m.subject) && !seen.has(m),
    );
    const code = mail ? /sign-in code is (\d{6})/.exec(mail.text ?? '')?.[1] : undefined;
    const link = mail
      ? /https?:\/\/\S+\/account\/sign-in\/email\/[A-Za-z0-9_-]+/.exec(mail.text ?? '')?.[0]
      : undefined;
    if (mail && code && link) {
      seen.add(mail);
      return { code, link };
    }
    assert.ok(Date.now() < deadline, `no new sign-in mail to ${to}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The code of the next sign-in mail to an address. */
async function codeFromMail(stack: Stack, to: string, seen: Set<ReceivedMail>): Promise<string> {
  return (await nextSignInMail(stack, to, seen)).code;
}

describe('hosted pages in Chromium: sign-in by e-mail link or code', {
  skip: skipWithoutChromium || apiNotBuilt('passwordless'),
}, () => {
  let stack: Stack;
  const seen = new Set<ReceivedMail>();
  let adaId = '';
  const sessionsOf = async (id: string) =>
    ((await stack.adminApi('GET', `/api/v1/users/${id}/sessions`)).body as { data: unknown[] }).data.length;

  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  it('code typed: sign-in page → "Sign in with an e-mail link or code" → mail → code → /account', async () => {
    const created = await stack.adminApi('POST', '/api/v1/users', { email: ADA });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    adaId = (created.body as { id: string }).id;
    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(`${stack.origin}/account/sign-in`);
    await page.getByRole('button', { name: 'Sign in with an e-mail link or code' }).click();
    await page.getByRole('heading', { name: 'Sign in with an e-mail link or code' }).waitFor();
    await assertAccessible(page, 'the e-mail sign-in step');
    await page.getByLabel('Your e-mail', { exact: true }).fill(ADA);
    await page.getByRole('button', { name: 'Send me a link and code' }).click();
    await page.getByRole('status').filter({ hasText: 'sign-in link and code' }).waitFor();
    await assertAccessible(page, 'the code form');
    await screenshot(page, 'sign-in-email-code');

    // A wrong code is refused and announced; the right one signs in.
    const code = await codeFromMail(stack, ADA, seen);
    await page.getByLabel('Sign-in code').fill(code === '000000' ? '000001' : '000000');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'That code is not correct' }).waitFor();
    await page.getByLabel('Sign-in code').fill(code);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByRole('heading', { name: 'Profile' }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });

  it('link clicked from the mail: the page signs in on a click, never on load', async () => {
    const id = adaId;
    const res = await fetch(`${stack.origin}/api/v1/login/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADA }),
    });
    assert.equal(res.status, 202);
    const { link } = await nextSignInMail(stack, ADA, seen);
    const before = await sessionsOf(id);

    // A mail scanner (a browser that runs scripts) opens the link: nothing happens.
    const scanner = await openTab(stack);
    await scanner.page.goto(link);
    await scanner.page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await scanner.page.waitForLoadState('networkidle');
    assert.equal(await sessionsOf(id), before, 'loading the page opened no session');
    await scanner.context.close();

    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(link);
    await page.getByRole('heading', { name: 'Sign in with your e-mail link' }).waitFor();
    await assertAccessible(page, 'the sign-in link page');
    await screenshot(page, 'sign-in-email-link');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByRole('heading', { name: 'Profile' }).waitFor();
    assert.equal(await sessionsOf(id), before + 1);
    assertClean(tab);
    await tab.context.close();

    // Used: the same link is refused, said in words.
    const again = await openTab(stack);
    await again.page.goto(link);
    await again.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await again.page.getByRole('alert').filter({ hasText: 'not valid any more' }).waitFor();
    await again.context.close();
  });

  it('a second factor: after the code the page asks for the TOTP, as after a password', async () => {
    const created = await stack.adminApi('POST', '/api/v1/users', { email: EVE, password: EVE_PASSWORD });
    assert.equal(created.status, 201);
    const login = (await (
      await fetch(`${stack.origin}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: EVE, password: EVE_PASSWORD }),
      })
    ).json()) as { access_token: string };
    const auth = { authorization: `Bearer ${login.access_token}`, 'content-type': 'application/json' };
    const enrol = (await (
      await fetch(`${stack.origin}/api/v1/mfa/totp`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ current_password: EVE_PASSWORD }),
      })
    ).json()) as { secret: string };
    const confirm = await fetch(`${stack.origin}/api/v1/mfa/totp/confirm`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ code: totp(enrol.secret) }),
    });
    assert.equal(confirm.status, 200);

    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(`${stack.origin}/account/sign-in`);
    await page.getByRole('button', { name: 'Sign in with an e-mail link or code' }).click();
    await page.getByLabel('Your e-mail', { exact: true }).fill(EVE);
    await page.getByRole('button', { name: 'Send me a link and code' }).click();
    await page.getByLabel('Sign-in code').fill(await codeFromMail(stack, EVE, seen));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    await page.getByLabel('Code from your authenticator app').fill(totp(enrol.secret, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByRole('heading', { name: 'Profile' }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });

  it('while the module is off the sign-in page offers nothing and the link page is 404', async () => {
    // Accounts made without a password sign in only by e-mail: the switch needs `force` (§16).
    const off = await stack.adminApi('PUT', '/api/v1/admin/modules/passwordless', {
      enabled: false,
      force: true,
    });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    try {
      const tab = await openTab(stack);
      await tab.page.goto(`${stack.origin}/account/sign-in`);
      await tab.page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      assert.equal(
        await tab.page.getByRole('button', { name: 'Sign in with an e-mail link or code' }).count(),
        0,
      );
      const page = await fetch(`${stack.origin}/account/sign-in/email/${'A'.repeat(43)}`);
      assert.equal(page.status, 404);
      await tab.context.close();
    } finally {
      await stack.adminApi('PUT', '/api/v1/admin/modules/passwordless', { enabled: true });
    }
  });
});
