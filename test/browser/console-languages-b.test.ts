import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { signInToConsole } from './console-support.ts';
import {
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

// API §24 for the console's OAuth, organization, role, provider and webhook views: in German and in
// Arabic every heading, label, table, empty state and sentence the scripts build comes from the
// catalogs (no raw `page.…`/`js.…` key and no `{placeholder}` left over), Arabic is right to left,
// axe-clean and never scrolls sideways at 320 or 1280 px, and ids, URIs and addresses read left to
// right inside it.

interface View {
  hash: string;
  view: string;
  ready: string;
}

const RAW_KEY = /\b(?:page|js)\.admin-[a-z-]+\.[a-z0-9_]+/;

/** What a person reads in the view: its text (code and form values aside) and its accessible labels. */
async function shownText(page: Page, view: string): Promise<string> {
  return page.locator(view).evaluate((root) => {
    const copy = root.cloneNode(true) as HTMLElement;
    // Code samples, ids and field values are data, not messages (a quick start has braces).
    for (const data of copy.querySelectorAll('pre, code, textarea, input, select')) data.remove();
    document.body.append(copy);
    copy.hidden = false;
    const text = copy.innerText;
    copy.remove();
    const labels = [...root.querySelectorAll('[aria-label], [title], [placeholder]')].flatMap((el) =>
      ['aria-label', 'title', 'placeholder'].map((name) => el.getAttribute(name) ?? ''),
    );
    const options = [...root.querySelectorAll('option, label, legend')].map((el) => el.textContent ?? '');
    return [text, ...labels, ...options].join('\n');
  });
}

async function assertTranslated(page: Page, view: string, label: string): Promise<void> {
  const text = await shownText(page, view);
  assert.doesNotMatch(text, RAW_KEY, `${label}: a raw message key`);
  assert.ok(
    !/[{}]/.test(text),
    `${label}: a leftover ICU placeholder in ${JSON.stringify(text.match(/.*[{}].*/)?.[0])}`,
  );
}

describe('admin console in Chromium: part B views in German and Arabic', {
  skip: skipWithoutChromium,
}, () => {
  let stack: Stack;
  const ids = { client: '', org: '', webhook: '' };
  before(async () => {
    // A webhook receiver address that never answers: the log needs no delivery for this test.
    stack = await startStack({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' });
    const made = async (method: string, path: string, body: unknown) => {
      const res = await stack.adminApi(method, path, body);
      assert.ok(res.status === 200 || res.status === 201, `${method} ${path}: ${JSON.stringify(res.body)}`);
      return res.body as Record<string, string>;
    };
    await made('POST', '/api/v1/resources', {
      identifier: 'https://api.example.com/invoices',
      name: 'Invoices',
      scopes: [{ name: 'invoices:read', description: 'Read invoices' }],
    });
    ids.client = (
      await made('POST', '/api/v1/clients', {
        name: 'Billing portal',
        type: 'confidential',
        application_type: 'web',
        redirect_uris: ['https://billing.example.com/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email'],
      })
    ).client_id as string;
    await made('PUT', '/api/v1/roles/billing', { description: 'Billing', permissions: ['invoices:read'] });
    ids.org = (await made('POST', '/api/v1/organizations', { name: 'Acme' })).id as string;
    const user = await made('POST', '/api/v1/users', {
      email: 'lina@pages.test',
      password: 'a passphrase lina types in beirut',
    });
    await made('PUT', `/api/v1/organizations/${ids.org}/members/${user.id}`, { roles: ['billing'] });
    await made('POST', `/api/v1/organizations/${ids.org}/invitations`, {
      email: 'karim@pages.test',
      roles: ['billing'],
    });
    await made('POST', '/api/v1/idp/providers', {
      name: 'google',
      preset: 'google',
      client_id: 'gatehouse.apps.googleusercontent.com',
      client_secret: 'a google client secret',
    });
    ids.webhook = (
      await made('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['user.created'] })
    ).id as string;
  });
  after(async () => {
    await stack?.close();
  });

  /** Each view: its hash, its section, and what shows once its data is in. */
  const views = (): View[] => [
    { hash: '#/oauth', view: '#view-oauth', ready: '#clients-body td[dir="ltr"]' },
    { hash: `#/oauth/${ids.client}`, view: '#view-oauth', ready: '#connect-facts dd' },
    { hash: '#/organizations', view: '#view-orgs', ready: '#orgs-body td[dir="ltr"]' },
    { hash: `#/organizations/${ids.org}`, view: '#view-org', ready: '#org-invitations-body td[dir="ltr"]' },
    { hash: '#/roles', view: '#view-roles', ready: '#roles-body td[dir="ltr"]' },
    { hash: '#/providers', view: '#view-providers', ready: '#providers-body td[dir="ltr"]' },
    { hash: '#/webhooks', view: '#view-webhooks', ready: '#webhooks-body td[dir="ltr"]' },
    { hash: `#/webhooks/${ids.webhook}`, view: '#view-webhook', ready: '#deliveries-body td' },
  ];

  async function consoleIn(lang: string) {
    const tab = await openTab(stack);
    await signInToConsole(tab.page, stack.origin);
    await tab.context.addCookies([{ name: 'gatehouse_lang', value: lang, url: stack.origin }]);
    await tab.page.goto(`${stack.origin}/admin`);
    assert.equal(await tab.page.locator('html').getAttribute('lang'), lang);
    return tab;
  }

  async function open(page: Page, v: View) {
    await page.goto(`${stack.origin}/admin${v.hash}`);
    await page.locator(v.view).waitFor();
    await page.locator(v.ready).first().waitFor();
  }

  it('German: every view speaks German (headings, tables, sentences the scripts build, a plural)', async () => {
    const tab = await consoleIn('de');
    const { page } = tab;
    for (const v of views()) {
      await open(page, v);
      await assertTranslated(page, v.view, `de ${v.hash}`);
    }
    // Spot checks: fragment text, script text, a count as a plural and a number through Intl.
    await open(page, views()[0] as View);
    await page.getByRole('heading', { name: 'OAuth-Apps', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'vertraulich, web' }).waitFor();
    await page.getByRole('button', { name: 'Billing portal bearbeiten' }).waitFor();
    await page.goto(`${stack.origin}/admin#/organizations/${ids.org}`);
    await page.locator('#org-members-count', { hasText: '1 Mitglied' }).waitFor();
    await page.getByRole('button', { name: 'Einladung von karim@pages.test widerrufen' }).waitFor();
    await page.goto(`${stack.origin}/admin#/webhooks/${ids.webhook}`);
    await page.getByRole('cell', { name: 'Noch keine Zustellungen.' }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });

  it('Arabic: right to left, translated, axe-clean, no sideways scroll at 320 and 1280 px; ids stay left to right', async () => {
    const tab = await consoleIn('ar');
    const { page } = tab;
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    for (const width of [1280, 320]) {
      await page.setViewportSize({ width, height: 800 });
      for (const v of views()) {
        await open(page, v);
        await assertTranslated(page, v.view, `ar ${v.hash} at ${width}px`);
        const overflow = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        assert.ok(overflow <= 0, `${v.hash} at ${width}px scrolls sideways by ${overflow}px`);
        if (width === 1280) await assertAccessible(page, `console ${v.hash} in Arabic at ${width}px`);
      }
    }
    await open(page, views()[3] as View);
    await page.locator('#org-members-count', { hasText: 'عضو واحد' }).waitFor();
    assert.equal(await page.locator('#org-invite-email').getAttribute('dir'), 'ltr');
    await open(page, views()[1] as View);
    await page.getByRole('heading', { name: 'ربط Billing portal' }).waitFor();
    assert.equal(await page.locator('#cl-redirects').getAttribute('dir'), 'ltr');
    assert.equal(await page.locator('#connect-facts code').first().getAttribute('dir'), 'ltr');
    assertClean(tab);
    await tab.context.close();
  });
});
