import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

// docs/pages.md, "One address": `npm start` listens on 127.0.0.1 while PUBLIC_URL defaults to
// localhost. Opening /admin at 127.0.0.1 served the console, whose sign-in then answered 403
// (Origin not PUBLIC_URL's). The page now goes to PUBLIC_URL's origin first, where it works.
describe('the first hour in Chromium: /admin at 127.0.0.1', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ LOG_LEVEL: 'info' });
  });
  after(() => stack?.close());

  it('regression: signing in at /admin on 127.0.0.1 of the started process was refused (403); now it works', async () => {
    const port = new URL(stack.origin).port;
    // The one start line names the address that works, and the console.
    const ready = stack.service
      .output()
      .split('\n')
      .filter((l) => l.includes('Gatehouse is ready at'));
    assert.equal(ready.length, 1);
    assert.equal(
      JSON.parse(ready[0] ?? '{}').msg,
      `Gatehouse is ready at ${stack.origin} (console: ${stack.origin}/admin), listening on 127.0.0.1:${port}`,
    );

    const tab = await openTab(stack);
    const { page } = tab;
    const refusals: number[] = [];
    page.on('response', (res) => {
      if (res.status() === 403) refusals.push(res.status());
    });
    await page.goto(`http://127.0.0.1:${port}/admin`);
    await page.waitForURL(`${stack.origin}/account/sign-in?next=/admin`);
    await page.getByLabel('E-mail address').fill(ADMIN_EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${stack.origin}/admin`);
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    assert.deepEqual(refusals, [], 'no call was refused');
    // Only the first navigation went to 127.0.0.1; everything after stayed on PUBLIC_URL's origin.
    assert.deepEqual(tab.offOrigin, [`http://127.0.0.1:${port}/admin`]);
    const unexpected = tab.errors.filter((e) => !/status of 401/.test(e));
    assert.deepEqual(unexpected, [], 'the page logged errors');
    const redirected = stack.service
      .output()
      .split('\n')
      .filter((l) => l.includes('pages were requested at'));
    assert.equal(redirected.length, 1, 'the operator is told once');
    await tab.context.close();
  });
});
