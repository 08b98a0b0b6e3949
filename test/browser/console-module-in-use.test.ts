import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeBase32IgnorePadding } from '@oslojs/encoding';
import { generateHOTP } from '@oslojs/otp';
import { signInToConsole } from './console-support.ts';
import {
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

async function login(stack: Stack, who: { email: string; password: string }): Promise<string> {
  const res = await fetch(`${stack.origin}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: who.email, password: who.password }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('admin console in Chromium: switching off a module that accounts use', {
  skip: skipWithoutChromium,
}, () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  // docs/api.md §16: the console used to switch mfa off at once, leaving every enrolled account
  // password-only; now it shows the 409's detail and sends `force` only when the admin confirms.
  it('module-off-downgrades-accounts: switching mfa off while an account holds TOTP asks first (409 detail), Cancel keeps it on, confirming forces it off', async () => {
    const ada = {
      email: 'ada.console@console.test',
      name: 'Ada',
      password: 'copper violin meadow rocket 64',
    };
    assert.equal((await stack.adminApi('POST', '/api/v1/users', { ...ada })).status, 201);
    const adaToken = await login(stack, ada);
    const authed = (path: string, body: unknown) =>
      fetch(`${stack.origin}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adaToken}` },
        body: JSON.stringify(body),
      });
    const enrol = await authed('/api/v1/mfa/totp', { current_password: ada.password });
    assert.equal(enrol.status, 200);
    const { secret } = (await enrol.json()) as { secret: string };
    const step = BigInt(Math.floor(Date.now() / 30_000));
    const code = generateHOTP(decodeBase32IgnorePadding(secret), step, 6);
    assert.equal((await authed('/api/v1/mfa/totp/confirm', { code })).status, 200);

    const tab = await openTab(stack);
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    await page.getByRole('link', { name: 'Modules' }).click();
    const toggle = page.getByRole('switch', { name: 'mfa' });
    assert.equal(await toggle.isChecked(), true);
    await toggle.click();
    const dialog = page.getByRole('dialog', { name: 'Turn mfa off?' });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /1 account holds a second factor/);
    await assertAccessible(page, 'modules: turn mfa off? dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForFunction(() => (document.getElementById('module-mfa') as HTMLInputElement).checked);
    assert.equal(await toggle.isChecked(), true, 'Cancel leaves it on');
    await toggle.click();
    await dialog.getByRole('button', { name: 'Turn mfa off anyway' }).click();
    await page.getByRole('status').filter({ hasText: 'mfa is off' }).waitFor();
    const signIn = await fetch(`${stack.origin}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ada.email, password: ada.password }),
    });
    assert.equal(signIn.status, 403);
    assert.equal(((await signIn.json()) as { code: string }).code, 'second_factor_unavailable');
    await toggle.click();
    await page.getByRole('status').filter({ hasText: 'mfa is on' }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });
});
