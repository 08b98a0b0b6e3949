/**
 * The admin console on a million users, in Chromium: how long each interaction takes from the
 * click (or the last key) until the table shows the answer. Not part of CI; the figures are in
 * docs/console.md.
 *
 *   node bench/console-scale.ts [--database-url sqlite:/tmp/console-scale.db] [--users 1000000]
 *
 * The database is seeded first (scripts/seed.ts) when it holds fewer users than --users. The
 * seed's own admins are demoted so that the configured admin is created at start.
 */
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { chromium, type Page } from 'playwright-core';
import { seed } from '../scripts/seed.ts';
import { freePort, startServiceProcess } from '../test/support/service-process.ts';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string', default: 'sqlite:/tmp/console-scale.db' },
    users: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '5' },
  },
});
const url = values['database-url'] as string;
if (!url.startsWith('sqlite:')) throw new Error('this script seeds and adjusts a SQLite file');
const file = url.slice('sqlite:'.length);
const wanted = Number(values.users);
const rounds = Number(values.rounds);
const ADMIN = { email: 'console-bench@gatehouse.test', password: 'console bench admin password 2026' };

const sqlite = new SQLite(file);
const present = (() => {
  try {
    return (sqlite.prepare('select count(*) as n from users').get() as { n: number }).n;
  } catch {
    return 0;
  }
})();
sqlite.close();
if (present < wanted) {
  console.log(`seeding ${wanted - present} users…`);
  await seed(url, wanted - present, { seed: 1000 + present, log: console.log });
}
const db = new SQLite(file);
db.prepare("update users set role = 'user' where role = 'admin' and email <> ?").run(ADMIN.email);
const total = (db.prepare('select count(*) as n from users').get() as { n: number }).n;
db.close();

const port = await freePort();
const origin = `http://localhost:${port}`;
const service = await startServiceProcess({
  PORT: String(port),
  PUBLIC_URL: origin,
  API_FORM: 'full',
  DATABASE_URL: url,
  ADMIN_EMAIL: ADMIN.email,
  ADMIN_PASSWORD: ADMIN.password,
  LOG_LEVEL: 'warn',
  SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});

const timings = new Map<string, number[]>();
async function measure(name: string, action: () => Promise<unknown>, done: () => Promise<unknown>) {
  const started = performance.now();
  await Promise.all([done(), action()]);
  const ms = performance.now() - started;
  timings.set(name, [...(timings.get(name) ?? []), ms]);
}

/** Waits until the summary line reports the page asked for (the table is filled just before it). */
const pageShown = (page: Page, n: number) => page.getByText(new RegExp(`Page ${n}\\.$`)).waitFor();

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${origin}/account/sign-in?next=/admin`);
  await page.getByLabel('E-mail address').fill(ADMIN.email);
  await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
  for (let round = 0; round < rounds; round++) {
    if (round === 0) {
      await measure(
        'open /admin after sign-in (stats + first page)',
        () => page.getByRole('button', { name: 'Sign in', exact: true }).click(),
        async () => {
          await page.waitForURL(`${origin}/admin`);
          await page.locator('#stats .stat').first().waitFor();
          await pageShown(page, 1);
        },
      );
    } else {
      await measure(
        'reload /admin (stats + first page)',
        () => page.reload(),
        async () => {
          await page.waitForLoadState('domcontentloaded');
          await page.locator('#stats .stat').first().waitFor();
          await pageShown(page, 1);
        },
      );
    }
    for (let n = 2; n <= 6; n++) {
      await measure(
        'next page',
        () => page.getByRole('button', { name: 'Next page' }).click(),
        () => pageShown(page, n),
      );
    }
    const filters = page.locator('#filters');
    for (const [label, option] of [
      ['Sort by', 'email'],
      ['Sort by', '-last_login_at'],
      ['Sort by', 'name'],
      ['Status', 'disabled'],
      ['Role', 'admin'],
    ] as const) {
      await measure(
        `${label}: ${option}`,
        () => filters.getByLabel(label).selectOption(option),
        () =>
          page
            .waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/users')
            .then(() => pageShown(page, 1)),
      );
    }
    await filters.getByLabel('Role').selectOption('');
    await filters.getByLabel('Status').selectOption('');
    await filters.getByLabel('Sort by').selectOption('-created_at');
    await pageShown(page, 1);
    for (const q of ['smith', 'maria', 'zz', 'johnson@gmail.com', 'mei']) {
      const search = page.getByLabel('Search');
      await search.fill('');
      await page.waitForTimeout(400);
      await search.pressSequentially(q.slice(0, -1));
      // From the last key: the debounce (250 ms) plus the search call and the rendering.
      await measure(
        `search "${q}" (from the last key, 250 ms debounce included)`,
        () => search.press(q.at(-1) as string),
        () =>
          page
            .getByRole('status')
            .filter({ hasText: `match “${q}”` })
            .waitFor(),
      );
      if (await page.getByRole('button', { name: 'Next page' }).isDisabled()) continue;
      await measure(
        `search "${q}": next page`,
        () => page.getByRole('button', { name: 'Next page' }).click(),
        () =>
          page
            .getByRole('status')
            .filter({ hasText: `match “${q}”, best matches first. Page 2.` })
            .waitFor(),
      );
    }
    await measure(
      "open a user's page",
      () => page.locator('#users-body a').first().click(),
      () => page.locator('#u-identities li').first().waitFor(),
    );
    // A full load (not a hash change): the next round starts from a fresh page.
    await page.goto(`${origin}/admin`);
    await pageShown(page, 1);
  }
  console.log(`\n${total.toLocaleString('en')} users, ${rounds} rounds (ms: median / max)\n`);
  console.log('| interaction | median ms | max ms |\n|---|---:|---:|');
  let slowest = { name: '', ms: 0 };
  for (const [name, list] of timings) {
    const sorted = [...list].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    const max = sorted.at(-1) as number;
    if (median > slowest.ms) slowest = { name, ms: median };
    console.log(`| ${name} | ${median.toFixed(0)} | ${max.toFixed(0)} |`);
  }
  console.log(`\nslowest interaction (median): ${slowest.name}, ${slowest.ms.toFixed(0)} ms`);
} finally {
  await browser.close();
  await service.stop();
}
