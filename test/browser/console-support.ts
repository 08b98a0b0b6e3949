import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { Locator, Page, Request } from 'playwright-core';
import { seed } from '../../scripts/seed.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, type Stack, startStack } from './harness.ts';

/**
 * Users seeded for the console's browser tests: enough that the table has hundreds of pages and
 * that loading "everything" would show at once, small enough for CI (a few seconds on SQLite).
 * The million-user figure of docs/console.md is measured separately (bench/console-scale.ts).
 */
export const SEEDED_USERS = 20_000;
const SCREENSHOT_DIR = new URL('../../docs/console/', import.meta.url);

/**
 * A browser stack on a database pre-filled with the scale seed (scripts/seed.ts). The seed's own
 * admins are demoted before the start, so the configured admin is created and is the only admin
 * (the last-admin guard can then be shown).
 */
export async function startSeededStack(): Promise<{ stack: Stack; cleanup(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-console-'));
  const file = join(dir, 'gatehouse.db');
  await seed(`sqlite:${file}`, SEEDED_USERS, { seed: 24 });
  const sqlite = new SQLite(file);
  sqlite.prepare("update users set role = 'user' where role = 'admin'").run();
  sqlite.close();
  const stack = await startStack({ DATABASE_URL: `sqlite:${file}` });
  return { stack, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Signs in at /admin (it sends you to the sign-in page and back) and waits for the users table. */
export async function signInToConsole(
  page: Page,
  origin: string,
  email = ADMIN_EMAIL,
  password = ADMIN_PASSWORD,
) {
  await page.goto(`${origin}/admin`);
  await page.waitForURL(`${origin}/account/sign-in?next=/admin`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${origin}/admin`);
}

/** The API calls a page makes, as method and URL (path and query), in order. */
export function recordApiCalls(page: Page): Array<{ method: string; url: URL }> {
  const calls: Array<{ method: string; url: URL }> = [];
  page.on('request', (request: Request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/api/')) calls.push({ method: request.method(), url });
  });
  return calls;
}

/** With SCREENSHOTS=1 writes docs/console/<name>.png; otherwise does nothing. */
export async function consoleScreenshot(page: Page, name: string): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOT_DIR).pathname, fullPage: true });
}

/**
 * A secret the console shows once (client secret, webhook signing secret): copied with the panel's
 * Copy button and read back from the clipboard, which must hold exactly the text shown.
 */
export async function readSecretPanel(page: Page, panel: Locator): Promise<string> {
  const shown = ((await panel.locator('code').textContent()) ?? '').trim();
  assert.ok(shown.length >= 20, `a secret is shown (${shown.length} characters)`);
  await panel.getByRole('button', { name: 'Copy' }).click();
  await panel.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, shown, 'the clipboard holds the shown secret');
  return shown;
}
