import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { type Receiver, startReceiver } from '../webhooks/receiver.ts';
import { consoleScreenshot, readSecretPanel, signInToConsole } from './console-support.ts';
import {
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

const DAY = 24 * 60 * 60 * 1000;

describe('admin console in Chromium: webhooks', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  let receiver: Receiver;
  let dir = '';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-console-webhooks-'));
    receiver = await startReceiver();
    // A real receiver on the loopback address: http and private addresses allowed for the test only.
    stack = await startStack({
      DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}`,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
  });
  after(async () => {
    await stack?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('create → secret shown once → test event reaches the receiver, signed → failure in the log → retry → rotate → disable → delete', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await signInToConsole(page, stack.origin);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'No endpoints yet.' }).waitFor();
    const form = page.locator('#webhook-form');
    await form.getByLabel('URL').fill(receiver.url);
    await form.getByLabel('Events').fill('user.created session.created');
    await form.getByLabel('Description').fill('CRM');
    await page.getByRole('button', { name: 'Add endpoint' }).click();

    // The endpoint's page, with its signing secret shown this once.
    await page.getByRole('heading', { name: receiver.url, level: 1 }).waitFor();
    const panel = page.getByRole('region', { name: 'Signing secret' });
    const secret = await readSecretPanel(page, panel);
    assert.match(secret, /^whsec_/);
    receiver.secrets.push(secret);
    await panel.getByRole('button', { name: 'I have stored it' }).click();
    await panel.waitFor({ state: 'hidden' });
    assert.equal((await page.content()).includes(secret), false, 'gone from the page');
    const listed = await stack.adminApi('GET', '/api/v1/webhooks');
    assert.equal(JSON.stringify(listed.body).includes(secret), false, 'never in the API again');

    // A test event reaches the real receiver, verified with the copied secret, and shows as delivered.
    const log = page.locator('#deliveries-body');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const [first] = (await receiver.waitFor((all) => all.some((r) => r.type === 'webhook.test'))).filter(
      (r) => r.type === 'webhook.test',
    );
    assert.deepEqual(first?.verifiedBy, [0], 'signed with the secret the console showed');
    await log.locator('tr').filter({ hasText: 'webhook.test' }).filter({ hasText: 'delivered' }).waitFor();
    await log.locator('tr').filter({ hasText: 'HTTP 204' }).first().waitFor();
    await page.getByRole('status').filter({ hasText: 'The webhook.test event was delivered.' }).waitFor();
    await assertAccessible(page, 'a webhook endpoint with its delivery log');
    await consoleScreenshot(page, 'webhook-desktop-light');

    // A receiver answering 503: the attempt is failed in the log; Retry delivers the same event again.
    receiver.respond = () => 503;
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const failedRow = log.locator('tr').filter({ hasText: 'HTTP 503' }).first();
    await failedRow.filter({ hasText: 'failed' }).waitFor({ timeout: 20_000 });
    const failedId = receiver.received.at(-1)?.id as string;
    receiver.respond = () => 204;
    const [retried] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/retry') && r.request().method() === 'POST'),
      failedRow.getByRole('button', { name: /^Retry the webhook\.test event/ }).click(),
    ]);
    assert.equal(retried.status(), 202);
    await page
      .getByRole('status')
      .filter({ hasText: 'The webhook.test event was delivered.' })
      .waitFor({ timeout: 20_000 });
    const again = receiver.received.filter((r) => r.id === failedId);
    assert.ok(again.length >= 2, 'the same webhook-id was delivered again');
    assert.deepEqual(again.at(-1)?.verifiedBy, [0]);
    // The log shows the second attempt of that event as delivered (column 3: the attempt number).
    await log
      .locator('tr')
      .filter({ has: page.locator('td:nth-child(3)', { hasText: /^2$/ }) })
      .filter({ hasText: 'delivered' })
      .first()
      .waitFor();

    // Edit, then rotate: the new secret (shown once) signs the next delivery.
    const edit = page.locator('#webhook-edit');
    await edit.getByLabel('Description').fill('CRM, production');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'The endpoint was saved.' }).waitFor();
    await page.getByRole('button', { name: 'Rotate secret…' }).click();
    await page
      .getByRole('dialog', { name: 'Rotate the signing secret?' })
      .getByRole('button', { name: 'Rotate secret' })
      .click();
    const rotated = await readSecretPanel(page, panel);
    assert.notEqual(rotated, secret);
    receiver.secrets.push(rotated);
    await panel.getByRole('button', { name: 'I have stored it' }).click();
    const before = receiver.received.length;
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const signed = await receiver.waitFor((all) => all.length > before);
    assert.deepEqual(signed.at(-1)?.verifiedBy, [0, 1], 'both secrets sign during the overlap');

    // Disable and enable by hand (no notice of an automatic disable).
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    await page
      .locator('#wh-status')
      .filter({ hasText: /^disabled$/ })
      .waitFor();
    assert.equal(await page.locator('#webhook-auto-disabled').isVisible(), false);
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page
      .locator('#wh-status')
      .filter({ hasText: /^enabled$/ })
      .waitFor();

    await page.getByRole('link', { name: '← All webhooks' }).click();
    const row = page.locator('#webhooks-body tr').filter({ hasText: receiver.url });
    await row.filter({ hasText: 'CRM, production' }).waitFor();
    await row.getByRole('link', { name: receiver.url }).click();
    await page.getByRole('button', { name: 'Delete this endpoint…' }).click();
    await page
      .getByRole('dialog', { name: `Delete ${receiver.url}?` })
      .getByRole('button', { name: 'Delete endpoint' })
      .click();
    await page
      .getByRole('status')
      .filter({ hasText: `The endpoint ${receiver.url} was deleted.` })
      .waitFor();
    await page.getByRole('cell', { name: 'No endpoints yet.' }).waitFor();
    assert.deepEqual((await stack.adminApi('GET', '/api/v1/webhooks')).body, { data: [] });
    assertClean(tab);
    await tab.context.close();
  });

  it('an endpoint failing for 5 days is disabled by the worker: the console says so, and enabling clears it', async () => {
    const created = await stack.adminApi('POST', '/api/v1/webhooks', { url: receiver.url, events: ['*'] });
    assert.equal(created.status, 201);
    const id = (created.body as { id: string }).id;
    // Five days of failures, compressed: the mark the worker keeps, set back in the database.
    const db = new SQLite(join(dir, 'gatehouse.db'));
    db.prepare('update webhook_endpoints set failing_since = ? where id = ?').run(
      Date.now() - 5 * DAY - 60_000,
      id,
    );
    db.close();
    receiver.respond = () => 500;
    assert.equal((await stack.adminApi('POST', `/api/v1/webhooks/${id}/test`)).status, 202);
    const deadline = Date.now() + 20_000;
    let state: { enabled: boolean; disabled_reason: string | null } = {
      enabled: true,
      disabled_reason: null,
    };
    while (state.enabled && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      state = (await stack.adminApi('GET', `/api/v1/webhooks/${id}`)).body as typeof state;
    }
    assert.deepEqual([state.enabled, state.disabled_reason], [false, 'failing']);
    receiver.respond = () => 204;

    const tab = await openTab(stack, { phone: true, dark: true });
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const row = page.locator('#webhooks-body tr').filter({ hasText: receiver.url });
    await row.filter({ hasText: 'disabled automatically (failing)' }).waitFor();
    await assertAccessible(page, 'webhooks (phone, dark)');
    await row.getByRole('link', { name: receiver.url }).click();
    const notice = page.locator('#webhook-auto-disabled');
    await notice.filter({ hasText: 'Disabled automatically.' }).waitFor();
    await page.locator('#deliveries-body tr').filter({ hasText: 'HTTP 500' }).first().waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no sideways scrolling of the page on a phone (${width}px)`);
    await assertAccessible(page, 'a webhook disabled automatically (phone, dark)');
    await consoleScreenshot(page, 'webhook-auto-disabled-phone-dark');
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page
      .locator('#wh-status')
      .filter({ hasText: /^enabled$/ })
      .waitFor();
    await notice.waitFor({ state: 'hidden' });
    assert.equal(
      ((await stack.adminApi('GET', `/api/v1/webhooks/${id}`)).body as typeof state).enabled,
      true,
    );
    assertClean(tab);
    await tab.context.close();
  });
});
