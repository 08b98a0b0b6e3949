import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  apiNotBuilt,
  assertAccessible,
  assertClean,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

const LENA = 'lena@pages.test';
const LENA_PASSWORD = 'a passphrase lena types in berlin';
const OMAR = 'omar@pages.test';
const OMAR_PASSWORD = 'a passphrase omar types in cairo';

// API §24 in a real browser: the language follows the browser, the picker sets the cookie and the
// signed-in user's locale, signing in brings the account's language, Arabic is right to left
// without sideways scroll at 320 and 1280 px and axe-clean, and a reset mail goes in the
// recipient's language.
describe('hosted pages in Chromium: languages', {
  skip: skipWithoutChromium || apiNotBuilt('recovery'),
}, () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  it("the browser's language, then the picker: the cookie, and the user's locale while signed in", async () => {
    const created = await stack.adminApi('POST', '/api/v1/users', { email: LENA, password: LENA_PASSWORD });
    assert.equal(created.status, 201);
    const id = (created.body as { id: string }).id;
    const tab = await openTab(stack);
    const { page, context } = tab;
    await context.setExtraHTTPHeaders({ 'accept-language': 'de-CH, en;q=0.5' });
    await page.goto(`${stack.origin}/account/sign-in`);
    assert.equal(await page.locator('html').getAttribute('lang'), 'de');
    await page.getByRole('heading', { name: 'Bei Gatehouse anmelden' }).waitFor();

    // The picker: a labelled select naming each language in itself; choosing reloads the page in it.
    await page.getByLabel('Sprache').selectOption('fr');
    await page.waitForURL(`${stack.origin}/account/sign-in`);
    await page.getByRole('heading', { name: 'Se connecter à Gatehouse' }).waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === 'gatehouse_lang');
    assert.equal(cookie?.value, 'fr');
    assert.equal(cookie?.path, '/');
    assert.equal(cookie?.sameSite, 'Lax');
    assert.ok(cookie && cookie.expires > Date.now() / 1000 + 364 * 86_400, 'a year');

    // Sign in in French; a script message (a wrong password) comes in French too.
    await page.getByLabel('Adresse e-mail').fill(LENA);
    await page.getByLabel('Mot de passe', { exact: true }).fill('not the password at all');
    await page.getByRole('button', { name: 'Se connecter', exact: true }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'L’adresse e-mail ou le mot de passe est incorrect.' })
      .waitFor();
    await page.getByLabel('Mot de passe', { exact: true }).fill(LENA_PASSWORD);
    await page.getByRole('button', { name: 'Se connecter', exact: true }).click();
    await page.waitForURL(`${stack.origin}/account`);
    await page.getByRole('heading', { name: 'Profil' }).waitFor();

    // Signed in, choosing Japanese also sets the account's locale.
    await page.getByLabel('Langue').selectOption('ja');
    await page.getByRole('heading', { name: 'プロフィール' }).waitFor();
    const user = (await stack.adminApi('GET', `/api/v1/users/${id}`)).body as { locale: string | null };
    assert.equal(user.locale, 'ja');
    assert.equal((await context.cookies()).find((c) => c.name === 'gatehouse_lang')?.value, 'ja');
    assertClean(tab);
    await tab.context.close();

    // A new browser without a choice: signing in sets the cookie to the account's locale.
    const fresh = await openTab(stack);
    await fresh.page.goto(`${stack.origin}/account/sign-in`);
    await fresh.page.getByLabel('E-mail address').fill(LENA);
    await fresh.page.getByLabel('Password', { exact: true }).fill(LENA_PASSWORD);
    await fresh.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await fresh.page.waitForURL(`${stack.origin}/account`);
    assert.equal((await fresh.context.cookies()).find((c) => c.name === 'gatehouse_lang')?.value, 'ja');
    await fresh.page.reload();
    assert.equal(await fresh.page.locator('html').getAttribute('lang'), 'ja');
    await fresh.page.getByRole('heading', { name: 'プロフィール' }).waitFor();
    assertClean(fresh);
    await fresh.context.close();
  });

  it('Arabic: right to left, no sideways scroll at 320 and 1280 px, axe-clean', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    for (const width of [320, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      // (/account itself sends a visitor without a session to the sign-in page, where `?lang=` no
      // longer holds: it is for one page only.)
      for (const path of ['/account/sign-in', '/account/forgot-password', '/account/reset-password/spent']) {
        await page.goto(`${stack.origin}${path}?lang=ar`);
        assert.equal(await page.locator('html').getAttribute('dir'), 'rtl', path);
        assert.equal(await page.locator('html').getAttribute('lang'), 'ar');
        await page.locator('main h1').first().waitFor();
        const overflow = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        assert.ok(overflow <= 0, `${path} at ${width}px scrolls sideways by ${overflow}px`);
        // Mirrored: the heading starts at the right edge of its box.
        assert.equal(
          await page
            .locator('main h1')
            .first()
            .evaluate((h) => getComputedStyle(h).direction),
          'rtl',
        );
        await assertAccessible(page, `${path} in Arabic at ${width}px`);
      }
    }
    assert.equal(await page.locator('input[type="email"]').first().getAttribute('dir'), 'ltr');
    assertClean(tab);
    await tab.context.close();
  });

  it("a reset mail in the recipient's locale, whatever the page's language", async () => {
    const created = await stack.adminApi('POST', '/api/v1/users', {
      email: OMAR,
      password: OMAR_PASSWORD,
      locale: 'de',
    });
    assert.equal(created.status, 201);
    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(`${stack.origin}/account/forgot-password?lang=es`);
    await page.getByLabel('Correo electrónico').fill(OMAR);
    await page.getByRole('button', { name: 'Enviar el enlace' }).click();
    await page.getByRole('status').filter({ hasText: 'Si existe una cuenta con esta dirección' }).waitFor();
    const deadline = Date.now() + 15_000;
    let mail = stack.smtp.messages.find((m) => m.envelope.to.includes(OMAR));
    while (mail === undefined && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      mail = stack.smtp.messages.find((m) => m.envelope.to.includes(OMAR));
    }
    assert.ok(mail, 'the reset mail arrived');
    assert.equal(mail.subject, 'Passwort zurücksetzen (Gatehouse)');
    assert.equal(mail.headers['content-language'], 'de');
    assert.match(mail.html ?? '', /<html lang="de" dir="ltr">/);
    assert.match(mail.text ?? '', /^Hallo,\n/);
    assert.match(mail.text ?? '', /\/account\/reset-password\/[A-Za-z0-9_-]+\?lang=de/);
    // The date in German, in UTC, the zone named.
    assert.match(
      mail.text ?? '',
      /läuft am [A-Z][a-z]+, \d{1,2}\. [A-Za-zä]+ \d{4} um \d{2}:\d{2}:\d{2} UTC ab/,
    );
    assertClean(tab);
    await tab.context.close();
  });
});
