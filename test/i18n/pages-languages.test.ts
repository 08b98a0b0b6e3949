import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { BUILT_IN } from '../../src/platform/i18n/index.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';

const catalog = (tag: string): Record<string, string> =>
  JSON.parse(readFileSync(new URL(`../../locales/${tag}.json`, import.meta.url), 'utf8'));

// Every hosted page in each of the ten languages (API §24): `<html lang dir>` with the catalog's
// tag, the page's own messages, no key or `{{t …}}` left unreplaced, and the picker.
describe('the hosted pages in each language', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp('sqlite', { env: { API_FORM: 'full', APP_NAME: 'Acme' } });
  });
  after(() => t.destroy());
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ url, headers });

  for (const tag of BUILT_IN) {
    it(`${tag}: sign-in, forgot-password, account, reset-password and the console`, async () => {
      const messages = catalog(tag);
      for (const path of [
        '/account/sign-in',
        '/account/forgot-password',
        '/account',
        '/account/reset-password/abc',
        '/admin',
      ]) {
        const res = await get(path, { 'accept-language': `${tag};q=0.9, sw` });
        assert.equal(res.statusCode, 200, `${tag} ${path}`);
        const html = res.body;
        assert.match(html, new RegExp(`<html lang="${tag}" dir="${tag === 'ar' ? 'rtl' : 'ltr'}">`), path);
        assert.equal(res.headers['content-language'], tag);
        assert.doesNotMatch(
          html,
          /\{\{t |\{\{app_name\}\}|\{app\}|page\.[a-z-]+\.[a-z_]+/,
          `${tag} ${path}: a raw key`,
        );
        // The picker: a labelled select naming each language in itself.
        assert.match(html, /<label for="gh-lang">[^<]+<\/label><select id="gh-lang" name="lang">/);
        assert.match(html, new RegExp(`<option value="${tag}" lang="${tag}" dir="(ltr|rtl)" selected>`));
        assert.match(html, /<option value="ar" lang="ar" dir="rtl"( selected)?>العربية<\/option>/);
        assert.match(html, /<option value="ja" lang="ja" dir="ltr"( selected)?>日本語<\/option>/);
        // E-mail addresses and codes read left to right in every language (API §24, right to left).
        for (const input of html.match(
          /<input [^>]*type="email"[^>]*>|<input [^>]*autocomplete="one-time-code"[^>]*>/g,
        ) ?? []) {
          assert.match(input, /\sdir="ltr"/, input);
        }
        assert.match(
          html,
          new RegExp(`<link rel="modulepreload" href="[^"]+/messages-${tag.toLowerCase()}\\.js">`),
        );
      }
      const signIn = (await get('/account/sign-in', { 'accept-language': tag })).body;
      const title = (messages['page.sign-in.sign_in_to_app'] ?? '').replace('{app}', 'Acme');
      assert.ok(signIn.includes(`<h1 id="title">${title.replace(/&/g, '&#38;')}</h1>`), `${tag}: ${title}`);
      assert.ok(signIn.includes(`<title>${messages['page.sign-in.title']} · Acme</title>`));
    });
  }

  it('?lang= applies to that page; the cookie to every page; the picker route sets the cookie as settled', async () => {
    assert.match(
      (await get('/account/sign-in?lang=ja', { cookie: 'gatehouse_lang=de' })).body,
      /<html lang="ja"/,
    );
    assert.match((await get('/account/sign-in', { cookie: 'gatehouse_lang=de' })).body, /<html lang="de"/);
    assert.match(
      (await get('/account/sign-in', { cookie: 'gatehouse_lang=de', 'accept-language': 'fr' })).body,
      /<html lang="de"/,
    );
    const chose = await get('/account/language?lang=pt-BR&next=%2Faccount%2Fsign-in%3Fnext%3D%252Faccount');
    assert.equal(chose.statusCode, 303);
    assert.equal(chose.headers['set-cookie'], 'gatehouse_lang=pt-BR; Max-Age=31536000; Path=/; SameSite=Lax');
    assert.equal(chose.headers.location, '/account/sign-in?next=%2Faccount');
    // Elsewhere than this service is never a place to return to.
    for (const next of [
      '//evil.example/x',
      '/\\evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
    ]) {
      const res = await get(`/account/language?lang=de&next=${encodeURIComponent(next)}`);
      assert.equal(res.headers.location, '/account', next);
    }
    const admin = await get('/admin/language?lang=ar');
    assert.equal(admin.headers.location, '/admin');
    const unknown = await get('/account/language?lang=sw');
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.headers['set-cookie'], undefined);
  });

  it("the scripts' messages are a cacheable asset per language; the JSON API stays English", async () => {
    const page = (await get('/account/sign-in', { 'accept-language': 'de' })).body;
    const href = /<link rel="modulepreload" href="([^"]+)">/.exec(page)?.[1] ?? '';
    const asset = await get(href);
    assert.equal(asset.statusCode, 200);
    assert.match(String(asset.headers['content-type']), /^text\/javascript/);
    assert.match(asset.body, /^export default \{/);
    assert.ok(asset.body.includes('Die beiden Passwörter stimmen nicht überein.'));
    const api = await t.app.inject({
      method: 'POST',
      url: '/api/v1/login',
      headers: { 'accept-language': 'de' },
      payload: { email: 'nobody@example.com', password: 'wrong password here' },
    });
    assert.match(JSON.parse(api.body).detail, /^[\x20-\x7e]+$/, 'English detail');
  });
});
