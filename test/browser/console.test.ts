import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleScreenshot, recordApiCalls, signInToConsole, startSeededStack } from './console-support.ts';
import {
  ADMIN_EMAIL,
  assertAccessible,
  assertClean,
  linkFromMail,
  openTab,
  type Stack,
  signInWithPassword,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

const GRACE = {
  email: 'grace.hopper.console@console.test',
  name: 'Grace Hopper',
  password: 'plum kettle orbit sandwich 58',
};
const LINUS = { email: 'linus@console.test', name: 'Linus', password: 'violet harbour tractor lantern 31' };

async function login(stack: Stack, who: { email: string; password: string }): Promise<string> {
  const res = await fetch(`${stack.origin}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: who.email, password: who.password }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function verifyToken(stack: Stack, token: string): Promise<number> {
  const res = await fetch(`${stack.origin}/api/v1/verify-token`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await res.arrayBuffer();
  return res.status;
}

describe('admin console in Chromium: search, disable, invite, modules, no access', {
  skip: skipWithoutChromium,
}, () => {
  let stack: Stack;
  let cleanup = () => {};
  before(async () => {
    ({ stack, cleanup } = await startSeededStack());
    for (const who of [GRACE, LINUS]) {
      const res = await stack.adminApi('POST', '/api/v1/users', { ...who });
      assert.equal(res.status, 201);
    }
  });
  after(async () => {
    await stack?.close();
    cleanup();
  });

  it('sign in as admin → find a user by search → disable: their verify-token then fails (401)', async () => {
    const graceToken = await login(stack, GRACE);
    assert.equal(await verifyToken(stack, graceToken), 200);

    const tab = await openTab(stack);
    const { page } = tab;
    const calls = recordApiCalls(page);
    await signInToConsole(page, stack.origin);
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    await page.locator('#stats .stat').first().waitFor();
    await page.locator('#users-body tr').nth(24).waitFor();
    await assertAccessible(page, 'the users table');
    await consoleScreenshot(page, 'users-desktop-light');

    // Search as you type: one call once typing pauses, not one per key; the exact address first.
    const before = calls.length;
    await page.getByLabel('Search').pressSequentially(GRACE.email);
    await page
      .getByRole('status')
      .filter({ hasText: `match “${GRACE.email}”` })
      .waitFor();
    const searches = calls.slice(before).filter((c) => c.url.pathname === '/api/v1/users/search');
    assert.ok(
      searches.length >= 1 && searches.length <= 3,
      `${searches.length} search calls for ${GRACE.email.length} keys`,
    );
    for (const s of searches) assert.equal(s.url.searchParams.get('limit'), '25');
    assert.equal(searches.at(-1)?.url.searchParams.get('q'), GRACE.email);
    const firstRow = page.locator('#users-body tr').first();
    assert.equal(await firstRow.locator('td').first().textContent(), GRACE.email);

    // Nothing found is said as such (regression: an empty page once broke the table with an error).
    await page.getByLabel('Search').fill('no-such-person-anywhere');
    await page.getByRole('cell', { name: 'No user matches this search.' }).waitFor();
    await page.getByLabel('Search').fill(GRACE.email);
    await page.locator('#users-body td').filter({ hasText: GRACE.email }).first().waitFor();

    // Keyboard: from the search field to the first result and into it.
    let tabs = 0;
    while ((await page.evaluate(() => document.activeElement?.textContent)) !== GRACE.email) {
      await page.keyboard.press('Tab');
      assert.ok(++tabs <= 12, 'the first result is a few Tabs from the search field');
    }
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: GRACE.name, exact: true }).waitFor();
    await assertAccessible(page, "a user's page");
    await consoleScreenshot(page, 'user-desktop-light');

    // Controls of endpoints this build does not serve are hidden, not broken.
    const modules = (await stack.adminApi('GET', '/api/v1/admin/modules')).body as {
      data: Array<{ enabled: boolean; endpoints: string[] }>;
    };
    const serves = (e: string) => modules.data.some((m) => m.enabled && m.endpoints.includes(e));
    assert.equal(
      await page.getByRole('button', { name: 'Reset second factors' }).isVisible(),
      serves('DELETE /api/v1/users/<id>/mfa'),
    );
    assert.equal(
      await page.getByRole('button', { name: 'Send a password reset link' }).isVisible(),
      serves('POST /api/v1/users/<id>/password-reset'),
    );

    const unlock = page.getByRole('button', { name: 'Clear failed sign-ins' });
    assert.equal(await unlock.isVisible(), serves('POST /api/v1/users/<id>/unlock'));
    if (await unlock.isVisible()) {
      await unlock.click();
      await page.getByRole('status').filter({ hasText: 'failed sign-ins of' }).waitFor();
    }

    // Disabling signs the person out everywhere: the console asks first, as it does for a delete.
    await page.getByRole('button', { name: 'Disable account' }).click();
    const confirm = page.getByRole('dialog', { name: `Disable ${GRACE.email}?` });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    assert.equal(await verifyToken(stack, graceToken), 200, 'cancelled: the account is untouched');
    await page.getByRole('button', { name: 'Disable account' }).click();
    await confirm.getByRole('button', { name: 'Disable account' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${GRACE.email} is disabled` })
      .waitFor();
    await page.locator('#u-status').filter({ hasText: 'disabled' }).waitFor();
    assert.equal(await verifyToken(stack, graceToken), 401, "the disabled user's token is refused at once");

    await page.getByRole('button', { name: 'Enable account' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${GRACE.email} is enabled` })
      .waitFor();
    assertClean(tab);
    await tab.context.close();
  });

  it('paging a large table: each page is one list call with limit and the previous cursor, newest first', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    const calls = recordApiCalls(page);
    const isList = (u: string) => new URL(u).pathname === '/api/v1/users';
    // Waited for from before the sign-in: the console asks for page 1 as soon as /admin loads, and
    // a wait set up after signInToConsole returned could miss that answer and time out.
    const firstList = page.waitForResponse((r) => isList(r.url()));
    await signInToConsole(page, stack.origin);
    const first = await firstList;
    await page.locator('#users-body tr').nth(24).waitFor();
    let body = (await first.json()) as {
      data: Array<{ created_at: string }>;
      next_cursor: string;
      total: number;
    };
    assert.ok(body.total >= 20_000, `the seeded table (${body.total})`);
    const created: string[] = body.data.map((u) => u.created_at);
    await page.getByText(`${body.total.toLocaleString('en')} users. Page 1.`).waitFor();

    const cursors: string[] = [];
    for (let n = 2; n <= 4; n++) {
      cursors.push(body.next_cursor);
      const [res] = await Promise.all([
        page.waitForResponse((r) => isList(r.url())),
        page.getByRole('button', { name: 'Next page' }).click(),
      ]);
      assert.equal(new URL(res.url()).searchParams.get('cursor'), body.next_cursor);
      body = await res.json();
      created.push(...body.data.map((u) => u.created_at));
      await page.getByText(`Page ${n}.`).waitFor();
    }
    const back = await Promise.all([
      page.waitForResponse((r) => isList(r.url())),
      page.getByRole('button', { name: 'Previous page' }).click(),
    ]);
    assert.equal(
      new URL(back[0].url()).searchParams.get('cursor'),
      cursors[1],
      'page 3 again, by its cursor',
    );
    await page.getByText('Page 3.').waitFor();

    // Newest first across pages, none repeated.
    assert.deepEqual(created, [...created].sort().reverse());
    assert.equal(new Set(created).size >= created.length - 5, true);

    const lists = calls.filter((c) => c.url.pathname === '/api/v1/users');
    assert.equal(lists.length, 5, 'one list call per page shown: 1, 2, 3, 4, back to 3');
    for (const [i, c] of lists.entries()) {
      assert.equal(c.method, 'GET');
      assert.equal(c.url.searchParams.get('limit'), '25', 'every call asks for one page');
      assert.equal(c.url.searchParams.get('sort'), '-created_at');
      assert.equal(c.url.searchParams.has('cursor'), i > 0);
    }
    const usersCalls = calls.filter((c) => c.url.pathname.startsWith('/api/v1/users'));
    for (const c of usersCalls) {
      if (c.url.pathname === '/api/v1/users/stats') continue;
      assert.ok(c.url.searchParams.has('limit'), `no call without a limit: ${c.url}`);
    }
    assert.equal(usersCalls.filter((c) => c.url.pathname === '/api/v1/users/stats').length, 1);

    // A filter starts again at page 1 with one call carrying it.
    const [filtered] = await Promise.all([
      page.waitForResponse((r) => isList(r.url())),
      page.locator('#filters').getByLabel('Status').selectOption('invited'),
    ]);
    const params = new URL(filtered.url()).searchParams;
    assert.equal(params.get('status'), 'invited');
    assert.equal(params.has('cursor'), false);
    await page.getByText('Page 1.').waitFor();
    assertClean(tab);
    await tab.context.close();
  });

  it('invite → mail → accept: the person is active; the last-admin guard is a clear message', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    await page.getByRole('link', { name: 'Add people' }).click();
    await page.getByRole('heading', { name: 'Add people' }).waitFor();
    const invite = page.locator('#invite-form');
    await invite.getByLabel('E-mail address').fill('ada@console.test');
    await invite.getByLabel('Name').fill('Ada');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'An invitation was sent to ada@console.test' })
      .waitFor();
    await assertAccessible(page, 'add people');
    await consoleScreenshot(page, 'add-people-desktop-light');

    const link = await linkFromMail(stack.smtp, 'ada@console.test', '/account/invitation/');
    const invitee = await openTab(stack);
    await invitee.page.goto(link);
    await invitee.page.getByLabel('Choose a password').fill('a long invitation passphrase 7');
    await invitee.page.getByLabel('Type it again').fill('a long invitation passphrase 7');
    await invitee.page.getByRole('button', { name: 'Set password and join' }).click();
    await invitee.page.waitForURL(`${stack.origin}/account`);
    assertClean(invitee);
    await invitee.context.close();

    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByLabel('Search').fill('ada@console.test');
    const row = page.locator('#users-body tr').filter({ hasText: 'ada@console.test' });
    await row.filter({ hasText: 'active' }).waitFor();

    // The only admin demoting themself: the API's 409 last_admin, worded for a person.
    await page.getByLabel('Search').fill(ADMIN_EMAIL);
    await page.getByRole('link', { name: ADMIN_EMAIL }).click();
    await page.locator('#edit-form').getByLabel('Role').selectOption('user');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('alert').filter({ hasText: 'This is the last active admin' }).waitFor();
    await consoleScreenshot(page, 'last-admin-desktop-light');
    assertClean(tab);
    await tab.context.close();
  });

  it('toggle a module in the console → its endpoint answers 404 module_disabled, and back', async () => {
    const tab = await openTab(stack, { phone: true, dark: true });
    const { page } = tab;
    await signInToConsole(page, stack.origin);
    await page.getByRole('link', { name: 'Modules' }).click();
    const toggle = page.getByRole('switch', { name: 'idp', exact: true });
    assert.equal(await toggle.isChecked(), true);
    assert.equal(
      await page.getByRole('switch', { name: 'auth', exact: true }).isDisabled(),
      true,
      'required modules stay on',
    );
    await assertAccessible(page, 'modules (phone, dark)');
    await consoleScreenshot(page, 'modules-phone-dark');

    await toggle.click();
    await page.getByRole('status').filter({ hasText: 'idp is off' }).waitFor();
    const off = await fetch(`${stack.origin}/api/v1/idp/config`);
    assert.equal(off.status, 404);
    assert.equal(((await off.json()) as { code: string }).code, 'module_disabled');
    await toggle.click();
    await page.getByRole('status').filter({ hasText: 'idp is on' }).waitFor();
    assert.equal((await fetch(`${stack.origin}/api/v1/idp/config`)).status, 200);

    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.locator('#users-body tr').nth(24).waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no sideways scrolling of the page on a phone (${width}px)`);
    await assertAccessible(page, 'users (phone, dark)');
    await consoleScreenshot(page, 'users-phone-dark');
    assertClean(tab);
    await tab.context.close();
  });

  it('a non-admin gets "No access" and the console asks the API for no data', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    const calls = recordApiCalls(page);
    await signInWithPassword(page, stack.origin, LINUS.email, LINUS.password);
    await page.goto(`${stack.origin}/admin`);
    await page.getByRole('heading', { name: 'No access' }).waitFor();
    await assertAccessible(page, 'no access');
    await consoleScreenshot(page, 'no-access');
    const afterAdmin = calls.slice(calls.findLastIndex((c) => c.url.pathname === '/api/v1/login') + 1);
    const paths = afterAdmin.map((c) => c.url.pathname).filter((p) => p !== '/api/v1/refresh-token');
    assert.deepEqual(
      paths.filter((p) => p.startsWith('/api/v1/users') || p.startsWith('/api/v1/admin')),
      [],
      'no data call',
    );
    assert.equal(await page.locator('#app').isVisible(), false);
    assertClean(tab);
    await tab.context.close();
  });
});

describe('admin console with the audit module', { skip: skipWithoutChromium }, () => {
  it('shows the audit trail with filters', async () => {
    const stack = await startStack();
    try {
      const tab = await openTab(stack);
      const { page } = tab;
      await signInToConsole(page, stack.origin);
      await page.getByRole('link', { name: 'Audit trail' }).click();
      await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
      await page.locator('#audit-body tr').first().waitFor();
      await page.getByLabel('Outcome').selectOption('success');
      await page.getByLabel('Action').fill('login.success');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      // Wait for the filtered table itself: the unfiltered one already holds login.success rows, so
      // waiting for one such row could read the table before the filtered answer replaced it.
      await page.waitForFunction(() => {
        const cells = [...document.querySelectorAll('#audit-body tr td:nth-child(2)')];
        return cells.length > 0 && cells.every((c) => c.textContent === 'login.success');
      });
      const actions = await page.locator('#audit-body tr td:nth-child(2)').allTextContents();
      assert.ok(actions.length > 0 && actions.every((a) => a === 'login.success'), actions.join());
      // People by address, not by id (the admin signed in: they are the actor of these rows).
      const actors = await page.locator('#audit-body tr td:nth-child(4)').allTextContents();
      assert.ok(actors.includes(ADMIN_EMAIL), actors.join());
      assert.ok(
        actors.every((a) => !/^[0-9a-f]{8}-/.test(a)),
        actors.join(),
      );
      await assertAccessible(page, 'the audit trail');
      await consoleScreenshot(page, 'audit-desktop-light');
      assertClean(tab);
      await tab.context.close();
    } finally {
      await stack.close();
    }
  });
});
