import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { createTestDatabase, type TestDialect } from '../helpers/databases.ts';
import { freePort, type ServiceProcess, startServiceProcess } from '../support/service-process.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';

/**
 * Real-browser tests (docs/pages.md): Debian's Chromium driven by playwright-core against a real
 * Gatehouse process and the real SMTP test server. Without Chromium the tests skip on a developer
 * machine and FAIL under CI=true (.ci/run installs it).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumMissing = !existsSync(CHROMIUM);
/** For describe(): skip only outside CI; under CI the `before` of startStack throws instead. */
export const skipWithoutChromium =
  chromiumMissing && process.env.CI !== 'true' ? `Chromium is not installed at ${CHROMIUM}` : false;

/**
 * For describe()/it() of a flow whose API another branch builds: a skip reason while that module's
 * routes are not in this source tree, so the flow's browser test runs as soon as they are merged
 * (the pages themselves are not served until then: src/http/pages/page-routes.ts, NEEDS).
 */
export function apiNotBuilt(...modules: string[]): string | false {
  const missing = modules.filter(
    (m) => !existsSync(new URL(`../../src/modules/${m}/${m}.routes.ts`, import.meta.url)),
  );
  return missing.length === 0 ? false : `the ${missing.join(', ')} API is not built on this branch yet`;
}

export const ADMIN_EMAIL = 'admin@pages.test';
export const ADMIN_PASSWORD = 'correct horse battery staple 42';
const SCREENSHOT_DIR = new URL('../../docs/pages/', import.meta.url);

const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Stack {
  /** `http://localhost:<port>`: a name, not an IP, because passkeys need a domain (WEBAUTHN_RP_ID). */
  origin: string;
  /** The database the process runs on: a fresh SQLite file or a fresh PostgreSQL database. */
  dialect: TestDialect;
  /** Its URL: a test may write the ground it stands on there (rows another branch's API will make). */
  databaseUrl: string;
  service: ServiceProcess;
  smtp: SmtpHarness;
  browser: Browser;
  /** Calls the JSON API as the first admin (bearer token, no cookies). */
  adminApi(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** Stops the process and SMTP and drops the database; closes the browser only if the stack launched it. */
  close(): Promise<void>;
}

export interface StackOptions {
  /** The database dialect (default SQLite); PostgreSQL needs TEST_DATABASE_URL (test/helpers/databases.ts). */
  dialect?: TestDialect;
  /**
   * A browser the caller launched (launchBrowser) and closes itself: a file that runs its flows on
   * each dialect starts Chromium once, not once per stack.
   */
  browser?: Browser;
  /** Chromium flags on top of the usual ones (ignored when `browser` is given). */
  browserArgs?: string[];
}

/** Debian's Chromium, headless. Throws (never skips) when it is missing. */
export async function launchBrowser(args: string[] = []): Promise<Browser> {
  if (chromiumMissing) throw new Error(`Chromium is required for the browser tests: ${CHROMIUM} is missing`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...LAUNCH_ARGS, ...args] });
}

/** Starts SMTP, a Gatehouse process (API_FORM=full) on a fresh database, and Chromium unless given one. */
export async function startStack(
  env: Record<string, string> = {},
  options: StackOptions = {},
): Promise<Stack> {
  if (chromiumMissing) throw new Error(`Chromium is required for the browser tests: ${CHROMIUM} is missing`);
  const dialect = options.dialect ?? 'sqlite';
  const database = await createTestDatabase(dialect);
  const smtp = await startSmtpServer();
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const service = await startServiceProcess(
    {
      PUBLIC_URL: origin,
      API_FORM: 'full',
      DATABASE_URL: database.url,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Gatehouse <no-reply@pages.test>',
      MAIL_RETRY_BASE_S: '1',
      LOG_LEVEL: 'warn',
      SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      ...env,
    },
    300,
    port,
  ).catch(async (err: unknown) => {
    await smtp.stop();
    await database.drop();
    throw err;
  });
  const ownBrowser = options.browser === undefined;
  const browser = options.browser ?? (await launchBrowser(options.browserArgs));
  let adminToken: string | null = null;
  const adminApi = async (method: string, path: string, body?: unknown) => {
    if (adminToken === null) {
      const login = await fetch(`${origin}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
      });
      adminToken = ((await login.json()) as { access_token: string }).access_token;
    }
    const res = await fetch(`${origin}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return {
    origin,
    dialect,
    databaseUrl: database.url,
    service,
    smtp,
    browser,
    adminApi,
    async close() {
      if (ownBrowser) await browser.close().catch(() => {});
      await service.stop();
      await smtp.stop();
      await database.drop();
    },
  };
}

export interface Tab {
  page: Page;
  context: BrowserContext;
  /** Every request the page made to anywhere but the service's origin (must stay empty). */
  offOrigin: string[];
  /** Console errors and page errors (a CSP violation shows here). */
  errors: string[];
}

/** A fresh browser context (its own cookies) and page, watched for requests leaving the origin. */
export async function openTab(stack: Stack, options: { phone?: boolean; dark?: boolean } = {}): Promise<Tab> {
  const context = await stack.browser.newContext({
    viewport: options.phone ? { width: 390, height: 844 } : { width: 1100, height: 800 },
    colorScheme: options.dark ? 'dark' : 'light',
    serviceWorkers: 'block',
  });
  const page = await context.newPage();
  const offOrigin: string[] = [];
  const errors: string[] = [];
  context.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'blob:' && url.protocol !== 'data:' && url.origin !== stack.origin) {
      offOrigin.push(request.url());
    }
  });
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  return { page, context, offOrigin, errors };
}

/** The checks every page visit ends with: nothing left the origin, no script error, no CSP violation. */
export function assertClean(tab: Tab): void {
  assert.deepEqual(tab.offOrigin, [], 'a request left the origin');
  // A refused call shows as "Failed to load resource: … 4xx" in the console: expected in flows that
  // test refusals. Anything else (a CSP violation, an exception) is a defect.
  const unexpected = tab.errors.filter(
    (e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e),
  );
  assert.deepEqual(unexpected, [], 'the page logged errors');
}

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const AXE_VERSION = (require('axe-core/package.json') as { version: string }).version;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown }>;
}

/** Runs axe-core in the page; fails on any serious or critical violation. Returns every violation. */
export async function assertAccessible(page: Page, label: string): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<unknown> } })
      .axe;
    const result = (await axe.run(document, { resultTypes: ['violations'] })) as {
      violations: AxeViolation[];
    };
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
  const grave = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(grave, [], `axe found serious or critical violations on ${label}`);
  if (process.env.SCREENSHOTS === '1') recordAxe(label, violations);
  return violations;
}

/** With SCREENSHOTS=1, every page's axe result (all impacts) goes to docs/pages/axe-results.json. */
function recordAxe(label: string, violations: AxeViolation[]): void {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = new URL('axe-results.json', SCREENSHOT_DIR);
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  all[label] = {
    axe: AXE_VERSION,
    violations: violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })),
  };
  const sorted = Object.fromEntries(
    Object.keys(all)
      .sort()
      .map((k) => [k, all[k]]),
  );
  writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
}

/**
 * With SCREENSHOTS=1 writes docs/pages/<name>.png (the docs link them); otherwise does nothing, so
 * an ordinary test run never rewrites committed files.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOT_DIR).pathname, fullPage: true });
}

const usedLinks = new Set<string>();

/**
 * The link under `path` in a mail to `to` that no earlier call returned, waiting for it to arrive
 * (mails of one action may arrive in any order).
 */
export async function linkFromMail(
  smtp: SmtpHarness,
  to: string,
  path: string,
  timeoutMs = 15_000,
): Promise<string> {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`https?://[^\\s"<>]+${escaped}[A-Za-z0-9_-]+`);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    for (const mail of smtp.messages) {
      if (!mail.envelope.to.includes(to)) continue;
      const link = pattern.exec(mail.text ?? '')?.[0];
      if (link !== undefined && !usedLinks.has(link)) {
        usedLinks.add(link);
        return link;
      }
    }
    assert.ok(performance.now() < deadline, `no new ${path} link in the mails to ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 6238 TOTP (SHA-1, 6 digits, 30 s) of a base32 secret at `at` (ms). */
export function totp(secret: string, at = Date.now()): string {
  let bits = '';
  for (const c of secret.replace(/=+$/, '').toUpperCase()) {
    const v = BASE32.indexOf(c);
    if (v < 0) throw new Error(`not base32: ${c}`);
    bits += v.toString(2).padStart(5, '0');
  }
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => Number.parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const hmac = createHmac('sha1', key).update(counter).digest();
  const offset = (hmac[hmac.length - 1] as number) & 0xf;
  const code = (hmac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(code).padStart(6, '0');
}

/** Opens the confirmation link mailed to `email` and confirms the address on the page (a click). */
export async function confirmAddressFromMail(page: Page, smtp: SmtpHarness, email: string): Promise<void> {
  await page.goto(await linkFromMail(smtp, email, '/account/verify-email/'));
  await page.getByRole('button', { name: 'Confirm my address' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `${email} is confirmed` })
    .waitFor();
}

/** Signs in through the page with e-mail and password and waits for /account. */
export async function signInWithPassword(page: Page, origin: string, email: string, password: string) {
  await page.goto(`${origin}/account/sign-in`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${origin}/account`);
  await page.getByRole('heading', { name: 'Profile' }).waitFor();
}
