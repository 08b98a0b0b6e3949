import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { v7 as uuidv7 } from 'uuid';
import { openDatabase } from '../../src/platform/db/database.ts';
import {
  assertAccessible,
  assertClean,
  linkFromMail,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
  type Tab,
} from './harness.ts';
import { addVirtualAuthenticator, withoutPasskeyAutofill } from './passkey-support.ts';

// API §24 on /account and the organization join page: the sentences their scripts build (session,
// passkey and organization lists, confirmations, counts) were English whatever the page's language.
// In German and Arabic, with every list filled, no message key or placeholder shows, and Arabic
// is right to left and axe-clean.

const EMAIL = 'jana@pages.test';
const PASSWORD = 'a passphrase jana types in leipzig';

const catalog = (tag: string): Record<string, string> =>
  JSON.parse(readFileSync(new URL(`../../locales/${tag}.json`, import.meta.url), 'utf8'));
const de = catalog('de');
const ar = catalog('ar');
/** A message with its arguments filled in as the page fills them (no plural in these). */
const fill = (message: string | undefined, values: Record<string, string>): string =>
  (message ?? '').replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? `{${name}}`);
/** The text of a message before its first argument. */
const lead = (message: string | undefined): string => (message ?? '').split('{')[0]?.trim() ?? '';

/** No message key (`js.account.x`), no `{placeholder}` and no English sentence of the lists. */
async function assertNoLeftovers(page: Page, label: string) {
  const text = await page.locator('main').innerText();
  assert.doesNotMatch(text, /\b(js|page|mail|shell)\.[a-z_-]+\.[a-z0-9_]+/, `${label}: a raw key`);
  assert.doesNotMatch(text, /\{[a-z_]+\}/, `${label}: a placeholder`);
  for (const english of [
    'this browser',
    'Signed in ',
    'last used',
    'Your roles',
    'recovery codes left',
    'Remove',
    'My organizations',
  ]) {
    assert.ok(!text.includes(english), `${label}: English "${english}" left`);
  }
}

describe('/account and the join page in Chromium: German and Arabic', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  let orgId: string;

  before(async () => {
    stack = await startStack();
    const database = openDatabase(stack.databaseUrl);
    try {
      orgId = uuidv7();
      const now = Date.now();
      await database.db
        .insertInto('organizations')
        .values({
          id: orgId,
          name: 'Werkbund',
          slug: 'werkbund',
          join_by_domain: 0,
          default_roles: '["member"]',
          require_mfa: 0,
          metadata: '{}',
          member_count: 0,
          created_at: now,
          updated_at: now,
        })
        .execute();
    } finally {
      await database.close();
    }
  });
  after(async () => {
    await stack?.close();
  });

  it('German: the join page, then /account with a session, a passkey and an organization; Arabic: the same, right to left', async () => {
    const created = await stack.adminApi('POST', '/api/v1/users', { email: EMAIL, password: PASSWORD });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const invited = await stack.adminApi('POST', `/api/v1/organizations/${orgId}/invitations`, {
      email: EMAIL,
      roles: ['member'],
    });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    const join = await linkFromMail(stack.smtp, EMAIL, '/account/organizations/join/');

    const tab: Tab = await openTab(stack);
    const { page, context } = tab;
    await withoutPasskeyAutofill(tab);
    await addVirtualAuthenticator(tab);
    await context.setExtraHTTPHeaders({ 'accept-language': 'de-DE, en;q=0.5' });

    // Sign in in German.
    await page.goto(`${stack.origin}/account/sign-in`);
    await page.getByLabel(de['page.common.e_mail_address'] as string, { exact: true }).fill(EMAIL);
    await page.getByLabel(de['page.common.password'] as string, { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: de['page.common.sign_in'], exact: true }).click();
    await page.waitForURL(`${stack.origin}/account`);

    // The join page in German: its own words and what its script says.
    await page.goto(join);
    assert.equal(await page.locator('html').getAttribute('lang'), 'de');
    await page
      .getByRole('heading', { name: fill(de['js.org-join.title'], { organization: 'Werkbund' }) })
      .waitFor();
    await page.getByText(lead(de['js.org-join.text'])).waitFor();
    await page.getByText(fill(de['js.org-join.roles'], { roles: 'member' })).waitFor();
    await page.getByText(fill(de['js.org-join.signed_in'], { email: EMAIL })).waitFor();
    await assertNoLeftovers(page, 'join page in German');
    await page.getByRole('button', { name: de['page.org-join.accept_and_join'] }).click();
    await page.waitForURL(/\/account\?joined=/);
    await page
      .getByRole('status')
      .filter({ hasText: fill(de['js.account.org_joined'], { name: 'Werkbund' }) })
      .waitFor();

    // A passkey, added in German: its confirmation and its line in the list.
    await page.locator('#passkey-name').fill('Arbeitslaptop');
    await page.locator('#passkey-password').fill(PASSWORD);
    await page.getByRole('button', { name: de['page.account.add_a_passkey'] }).click();
    await page
      .getByRole('status')
      .filter({ hasText: fill(de['js.account.passkey_added'], { name: 'Arbeitslaptop' }) })
      .waitFor();
    await page.locator('#passkeys-list').getByText(lead(de['js.account.passkey_dates'])).waitFor();
    await page
      .locator('#passkeys-list')
      .getByRole('button', { name: fill(de['js.account.remove_named'], { name: 'Arbeitslaptop' }) })
      .waitFor();

    // The lists, filled: the session (this browser), the organization with its roles, the factors.
    await page.reload();
    const sessions = page.locator('#sessions-list');
    await sessions.getByText(de['js.account.this_browser'] as string).waitFor();
    await sessions.getByText(lead(de['js.account.session_dates'])).first().waitFor();
    await sessions.getByText(fill(de['js.account.device'], { browser: 'Chrome', system: 'Linux' })).waitFor();
    await page
      .locator('#organizations-list')
      .getByText(fill(de['js.account.org_roles'], { roles: 'member' }))
      .waitFor();
    await page
      .locator('#mfa-status')
      .getByText(de['js.account.totp_none'] as string)
      .waitFor();
    // An address an admin typed in is not confirmed yet: the badge says so in German.
    assert.equal(await page.locator('#profile-verified').innerText(), de['js.account.not_confirmed']);
    await assertNoLeftovers(page, '/account in German');

    // Arabic: the same page right to left, every list in Arabic, axe-clean.
    await page.goto(`${stack.origin}/account?lang=ar`);
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    await page
      .locator('#sessions-list')
      .getByText(ar['js.account.this_browser'] as string)
      .waitFor();
    await page
      .locator('#passkeys-list')
      .getByRole('button', { name: fill(ar['js.account.remove_named'], { name: 'Arbeitslaptop' }) })
      .waitFor();
    await page
      .locator('#organizations-list')
      .getByText(fill(ar['js.account.org_roles'], { roles: 'member' }))
      .waitFor();
    await page
      .locator('#mfa-status')
      .getByText(ar['js.account.totp_none'] as string)
      .waitFor();
    await assertNoLeftovers(page, '/account in Arabic');
    await assertAccessible(page, '/account in Arabic with its lists filled');
    assertClean(tab);
    await context.close();
  });
});
