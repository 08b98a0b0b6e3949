import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { createSecretsKey } from '../../src/identity/tokens/secrets-key.ts';
import { consoleScreenshot, signInToConsole } from './console-support.ts';
import {
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

const SECRET = 'GOCSPX-console-test-secret-4f9a2c';

describe('admin console in Chromium: sign-in providers', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  let dir = '';
  const sealed = () => {
    const db = new SQLite(join(dir, 'gatehouse.db'), { readonly: true });
    try {
      const row = db.prepare("select client_secret_box from idp_providers where name = 'google'").get() as
        | { client_secret_box: string | null }
        | undefined;
      const box = row?.client_secret_box ?? null;
      // The harness's SECRETS_KEY (32 bytes of 7): the test opens what the service sealed.
      const opened =
        box === null
          ? null
          : createSecretsKey(Buffer.alloc(32, 7)).open(box, 'idp_provider:google:client_secret');
      return { box, plain: opened?.toString('utf8') ?? null };
    } finally {
      db.close();
    }
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-console-providers-'));
    stack = await startStack({ DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}` });
  });
  after(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('create from a preset → listed, its button on the sign-in page, the secret never shown back → edit → delete', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    await page.getByRole('link', { name: 'Sign-in providers' }).click();
    await page.getByRole('heading', { name: 'Sign-in providers', level: 1 }).waitFor();
    const form = page.locator('#provider-form');

    // Without a preset an issuer is needed: the API's refusal is shown in words.
    await form.getByLabel('Name', { exact: true }).fill('corp');
    await form.getByLabel('Client id').fill('corp-console');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await form.getByRole('alert').filter({ hasText: 'issuer is required without a preset' }).waitFor();

    // Each preset offers its own fields: Apple a team id, key id and private key instead of a secret.
    await form.getByLabel('Preset').selectOption('apple');
    for (const label of ['Team id', 'Key id', 'Private key (.p8)']) {
      assert.equal(await form.getByLabel(label).isVisible(), true, label);
    }
    assert.equal(await form.getByLabel('Client secret').isVisible(), false);
    await form.getByLabel('Preset').selectOption('microsoft');
    assert.equal(await form.getByLabel('Tenant id').isVisible(), true);
    assert.equal(await form.getByLabel('Team id').isVisible(), false);

    // The Google preset: its issuer is fixed (the field is not offered), the secret is write-only.
    await form.getByLabel('Preset').selectOption('google');
    assert.equal(await form.getByLabel('Issuer').isVisible(), false);
    assert.equal(await form.getByLabel('Tenant id').isVisible(), false);
    await form.getByLabel('Name', { exact: true }).fill('google');
    await form.getByLabel('Client id').fill('1234.apps.googleusercontent.com');
    await form.getByLabel('Client secret').fill(SECRET);
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('status').filter({ hasText: 'Google was added.' }).waitFor();
    const row = page.locator('#providers-body tr').filter({ hasText: '1234.apps.googleusercontent.com' });
    await row.filter({ hasText: 'https://accounts.google.com' }).waitFor();
    assert.equal(await form.getByLabel('Client secret').inputValue(), '', 'the form forgets it');
    const stored = sealed();
    assert.equal(stored.plain, SECRET, 'the secret typed is the one stored');
    assert.equal(stored.box?.includes(SECRET), false, 'sealed, not in plain text');
    await assertAccessible(page, 'sign-in providers');
    await consoleScreenshot(page, 'providers-desktop-light');

    const visitor = await openTab(stack);
    await visitor.page.goto(`${stack.origin}/account/sign-in`);
    await visitor.page.getByRole('link', { name: 'Continue with Google' }).waitFor();

    // Edit: the secret field comes back empty and an empty field keeps the stored secret.
    await page.getByRole('button', { name: 'Edit Google' }).click();
    await page.getByRole('heading', { name: 'Edit Google' }).waitFor();
    assert.equal(await form.getByLabel('Client secret').inputValue(), '');
    assert.equal(await form.getByLabel('Name', { exact: true }).isDisabled(), true);
    assert.equal((await page.content()).includes(SECRET), false, 'never shown back');
    await form.getByLabel('Button label').fill('Google Workspace');
    await form.getByLabel('Allowed domains').fill('example.com');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Google Workspace was saved.' }).waitFor();
    await row.filter({ hasText: 'Google Workspace' }).waitFor();
    assert.equal(sealed().plain, SECRET, 'an empty secret field keeps the stored secret');
    const listed = (await stack.adminApi('GET', '/api/v1/idp/providers')).body as {
      data: Array<{ name: string; display_name: string; allowed_domains: string[] }>;
    };
    assert.deepEqual(
      listed.data.map((p) => [p.name, p.display_name, p.allowed_domains]),
      [['google', 'Google Workspace', ['example.com']]],
    );
    assert.equal(JSON.stringify(listed).includes(SECRET), false);
    await visitor.page.reload();
    await visitor.page.getByRole('link', { name: 'Continue with Google Workspace' }).waitFor();

    // Delete, after a confirmation: the button leaves the sign-in page.
    await page.getByRole('button', { name: 'Edit Google Workspace' }).click();
    await page.getByRole('button', { name: 'Delete provider…' }).click();
    await page
      .getByRole('dialog', { name: 'Delete Google Workspace?' })
      .getByRole('button', { name: 'Delete provider' })
      .click();
    await page.getByRole('cell', { name: 'No providers yet.' }).waitFor();
    assert.deepEqual((await stack.adminApi('GET', '/api/v1/idp/providers')).body, { data: [] });
    await visitor.page.reload();
    await visitor.page
      .getByRole('heading', { name: /sign in/i })
      .first()
      .waitFor();
    assert.equal(await visitor.page.getByRole('link', { name: /Continue with Google/ }).count(), 0);
    assertClean(visitor);
    await visitor.context.close();
    assertClean(tab);
    await tab.context.close();
  });
});
