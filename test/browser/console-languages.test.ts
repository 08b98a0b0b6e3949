import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { DIALECTS } from '../helpers/databases.ts';
import { signInToConsole } from './console-support.ts';
import {
  assertAccessible,
  assertClean,
  launchBrowser,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

const ADA = {
  email: 'ada.lovelace@languages.test',
  name: 'Ada Lovelace',
  password: 'copper violin meadow lantern 19',
};

/**
 * What a translated view must not show (API §24): a message key the catalogs lack (`page.…`,
 * `js.…`, `shell.…` as text) or an ICU placeholder left unfilled (`{email}`), in the visible text of
 * the console or in a name, description or hint the browser gives a screen reader.
 */
async function leftovers(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const bad = (text: string) => /\b(?:page|js|shell)\.[a-z_-]+\.[a-z_]/.test(text) || /[{}]/.test(text);
    const root = document.getElementById('console') as HTMLElement;
    for (const line of root.innerText.split('\n')) if (bad(line)) found.push(line);
    for (const node of root.querySelectorAll('[aria-label], [title], [placeholder], option, caption')) {
      for (const value of [
        node.getAttribute('aria-label'),
        node.getAttribute('title'),
        node.getAttribute('placeholder'),
        node.textContent,
      ]) {
        if (value && bad(value)) found.push(`${node.tagName.toLowerCase()}: ${value}`);
      }
    }
    if (bad(document.title)) found.push(`title: ${document.title}`);
    return found;
  });
}

async function sideways(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/** The users view in the page's language, loaded: rows, the summary and the stats cards. */
async function showUsers(page: Page, origin: string): Promise<void> {
  // A fresh load: the language is chosen by the server for each page.
  await page.goto('about:blank');
  await page.goto(`${origin}/admin#/users`);
  await page.locator('#users-body tr').first().waitFor();
  await page.locator('#stats .stat').first().waitFor();
  await page.waitForFunction(() => (document.getElementById('page-label')?.textContent ?? '') !== '');
}

/** A user's page, loaded: facts, sessions and identities. */
async function showAda(page: Page, origin: string, id: string): Promise<void> {
  // A fresh load: the language is chosen by the server for each page.
  await page.goto('about:blank');
  await page.goto(`${origin}/admin#/users/${id}`);
  await page.locator('#user-body').waitFor({ state: 'visible' });
  await page.locator('#u-sessions li').first().waitFor();
  await page.locator('#u-identities li').first().waitFor();
}

let browser: Browser | undefined;
after(async () => {
  await browser?.close();
});

for (const dialect of DIALECTS) {
  // The console's views (users list, a user's page) in German and in Arabic: no message key or
  // placeholder left, Arabic right to left with addresses left to right, axe-clean, no sideways
  // scroll at 320 and 1280 px (docs/languages.md).
  describe(`admin console in Chromium: its views in other languages (${dialect})`, {
    skip: skipWithoutChromium,
  }, () => {
    let stack: Stack;
    let adaId = '';
    before(async () => {
      browser ??= await launchBrowser();
      stack = await startStack({}, { dialect, browser });
      const created = await stack.adminApi('POST', '/api/v1/users', ADA);
      assert.equal(created.status, 201);
      adaId = (created.body as { id: string }).id;
      // A live session, so the user's page lists one (its line holds two dates and an address).
      const login = await fetch(`${stack.origin}/api/v1/login`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0',
        },
        body: JSON.stringify({ email: ADA.email, password: ADA.password }),
      });
      assert.equal(login.status, 200);
      await login.arrayBuffer();
    });
    after(async () => {
      await stack?.close();
    });

    it('German: the users list and a user’s page, every text translated', async () => {
      const tab = await openTab(stack);
      const { page, context } = tab;
      await signInToConsole(page, stack.origin);
      await context.addCookies([{ name: 'gatehouse_lang', value: 'de', url: stack.origin }]);

      await showUsers(page, stack.origin);
      assert.equal(await page.locator('html').getAttribute('lang'), 'de');
      await page.getByRole('heading', { name: 'Benutzer', exact: true }).waitFor();
      await page.getByRole('columnheader', { name: 'Letzte Anmeldung' }).waitFor();
      assert.match((await page.locator('#result-summary').textContent()) ?? '', /^\d+ Benutzer\. Seite 1\.$/);
      const adaRow = page.locator('#users-body tr').filter({ hasText: ADA.email });
      await adaRow.filter({ hasText: 'aktiv' }).waitFor();
      assert.deepEqual(await leftovers(page), []);

      // A search: the plural summary and the caption name the query.
      await page.getByLabel('Suchen', { exact: true }).fill(ADA.email);
      await page
        .getByRole('status')
        .filter({ hasText: `„${ADA.email}“` })
        .waitFor();
      assert.deepEqual(await leftovers(page), []);

      await showAda(page, stack.origin, adaId);
      await page.getByRole('heading', { name: ADA.name }).waitFor();
      await page.getByRole('button', { name: 'Konto deaktivieren' }).waitFor();
      assert.match(
        (await page.locator('#u-sessions li').first().textContent()) ?? '',
        /Firefox .* angemeldet am /,
      );
      assert.equal(await page.locator('#u-status').textContent(), 'aktiv');
      assert.deepEqual(await leftovers(page), []);

      // A confirmation the script builds, and the field error of the shared form helper.
      await page.locator('#delete-user').click();
      await page.getByRole('dialog', { name: `${ADA.email} löschen?` }).waitFor();
      assert.deepEqual(await leftovers(page), []);
      await page.getByRole('button', { name: 'Abbrechen' }).click();
      await page.locator('#e-email').fill('');
      await page.getByRole('button', { name: 'Änderungen speichern' }).click();
      await page.getByRole('alert').filter({ hasText: 'E-Mail-Adresse ist erforderlich.' }).waitFor();

      // The modules view: the API's English descriptions in the catalog's words.
      await page.goto(`${stack.origin}/admin#/modules`);
      await page.getByRole('heading', { name: 'Module', exact: true }).waitFor();
      await page.getByText('Benutzerliste, Suche, Statistik und Änderungen').waitFor();
      assert.deepEqual(await leftovers(page), []);
      assertClean(tab);
      await context.close();
    });

    it('Arabic: right to left, addresses left to right, axe-clean, no sideways scroll at 320 and 1280 px', async () => {
      const tab = await openTab(stack);
      const { page, context } = tab;
      await signInToConsole(page, stack.origin);
      await context.addCookies([{ name: 'gatehouse_lang', value: 'ar', url: stack.origin }]);
      for (const width of [1280, 320]) {
        await page.setViewportSize({ width, height: 800 });

        await showUsers(page, stack.origin);
        assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
        assert.equal(await page.locator('html').getAttribute('lang'), 'ar');
        await page.getByRole('heading', { name: 'المستخدمون', exact: true }).waitFor();
        assert.deepEqual(await leftovers(page), [], `users list at ${width}px`);
        const email = page.locator('#users-body tr').filter({ hasText: ADA.email }).locator('td a').first();
        assert.equal(await email.getAttribute('dir'), 'ltr');
        assert.equal(
          await page
            .locator('#users-body td')
            .nth(1)
            .evaluate((td) => getComputedStyle(td).direction),
          'rtl',
        );
        assert.ok((await sideways(page)) <= 0, `the users list scrolls sideways at ${width}px`);
        await assertAccessible(page, `the console's users list in Arabic at ${width}px`);

        await showAda(page, stack.origin, adaId);
        await page.getByRole('heading', { name: ADA.name }).waitFor();
        await page.getByRole('button', { name: 'تعطيل الحساب' }).waitFor();
        assert.equal(await page.locator('#u-email').getAttribute('dir'), 'ltr');
        assert.equal(await page.locator('#e-email').getAttribute('dir'), 'ltr');
        assert.equal(await page.locator('#u-id').getAttribute('dir'), 'ltr');
        assert.deepEqual(await leftovers(page), [], `a user's page at ${width}px`);
        assert.ok((await sideways(page)) <= 0, `a user's page scrolls sideways at ${width}px`);
        await assertAccessible(page, `a user's page of the console in Arabic at ${width}px`);

        // The address inside an Arabic sentence is isolated, so it cannot reorder the words around it.
        await page.locator('#delete-user').click();
        const title = (await page.locator('#confirm-title').textContent()) ?? '';
        assert.equal(title, `هل تريد حذف \u2068${ADA.email}\u2069؟`);
        await page.locator('#confirm-no').click();

        // The other views of this part: add people, modules, the audit trail (Ada's creation in it).
        for (const [view, ready] of [
          ['new', '#invite-form'],
          ['modules', '#modules-list li'],
          ['audit', '#audit-body tr'],
        ] as const) {
          await page.goto('about:blank');
          await page.goto(`${stack.origin}/admin#/${view}`);
          await page.locator(ready).first().waitFor();
          assert.deepEqual(await leftovers(page), [], `#/${view} at ${width}px`);
          assert.ok((await sideways(page)) <= 0, `#/${view} scrolls sideways at ${width}px`);
          await assertAccessible(page, `the console's #/${view} in Arabic at ${width}px`);
        }
      }
      assertClean(tab);
      await context.close();
    });
  });
}
