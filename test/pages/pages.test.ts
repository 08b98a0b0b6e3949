import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { buildTestApp, json, type TestApp, testEnv } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

const PAGES = [
  '/account/sign-in',
  '/account',
  `/account/invitation/${'A'.repeat(43)}`,
  '/account/forgot-password',
  `/account/reset-password/${'A'.repeat(43)}`,
  `/account/verify-email/${'A'.repeat(43)}`,
];

/** The endpoint a flow page drives (and its module): the page is served only when the endpoint is. */
const FLOWS: Record<string, { module: string; endpoint: string }> = {
  invitation: { module: 'invitations', endpoint: 'POST /api/v1/invite/<token>/set-password' },
  'forgot-password': { module: 'recovery', endpoint: 'POST /api/v1/password/reset/<token>' },
  'reset-password': { module: 'recovery', endpoint: 'POST /api/v1/password/reset/<token>' },
  'verify-email': { module: 'email', endpoint: 'POST /api/v1/email/verify/<token>' },
};
const flowOf = (url: string) => FLOWS[url.split('/')[2] ?? ''];

function assetUrls(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/account\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
}

for (const dialect of DIALECTS) {
  describe(`hosted pages: HTML, assets and headers [${dialect}]`, () => {
    let full: TestApp;
    before(async () => {
      full = await buildTestApp(dialect, {
        env: { API_FORM: 'full', APP_NAME: 'Acme & Co "ID"', APP_ACCENT_COLOR: '#8a2be2' },
      });
    });
    after(() => full.destroy());

    const listed = async () => {
      const index = json<{ documentation: Record<string, Record<string, string>> }>(
        await full.app.inject({ url: '/' }),
      );
      return new Set(Object.values(index.documentation).flatMap((group) => Object.values(group)));
    };

    it("a flow's page is served exactly while the API it drives is (enabled and built)", async () => {
      const served = await listed();
      const account = await full.app.inject({ url: '/account' });
      const modules = /data-modules="([^"]*)"/.exec(account.body)?.[1]?.split(' ') ?? [];
      for (const url of PAGES.slice(2)) {
        const flow = flowOf(url);
        assert.ok(flow);
        const res = await full.app.inject({ url });
        assert.equal(res.statusCode, served.has(flow.endpoint) ? 200 : 404, url);
        if (res.statusCode === 404) assert.equal(json(res).code, 'not_found');
        assert.equal(modules.includes(flow.module), served.has(flow.endpoint), flow.module);
      }
    });

    it('every page: 200 HTML with the strict CSP, no-store, and no inline script, style or handler', async () => {
      const served = await listed();
      for (const url of PAGES) {
        const flow = flowOf(url);
        if (flow !== undefined && !served.has(flow.endpoint)) continue;
        const res = await full.app.inject({ url });
        assert.equal(res.statusCode, 200, url);
        assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(res.headers['x-frame-options'], 'DENY');
        assert.equal(res.headers['referrer-policy'], 'no-referrer');
        const csp = String(res.headers['content-security-policy']);
        assert.match(csp, /^default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:;/);
        assert.match(csp, /object-src 'none'/);
        assert.match(csp, /frame-ancestors 'none'/);
        assert.doesNotMatch(csp, /unsafe|\*|data:/);
        const html = res.body;
        assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, `${url}: inline script`);
        assert.doesNotMatch(html, /\sstyle=|<style/i, `${url}: inline style`);
        assert.doesNotMatch(html, /\son[a-z]+=/i, `${url}: inline event handler`);
        assert.doesNotMatch(html, /https?:\/\//, `${url}: an absolute URL (an external request)`);
        // APP_NAME is escaped wherever it appears.
        assert.match(html, /<title>[^<]+ · Acme &#38; Co &#34;ID&#34;<\/title>/);
        assert.doesNotMatch(html, /Acme & Co/);
      }
    });

    it('assets: right types, a year of caching under a versioned path, ETag revalidation, old versions 404', async () => {
      const page = await full.app.inject({ url: '/account/sign-in' });
      const urls = assetUrls(page.body);
      assert.ok(urls.some((u) => u.endsWith('/style.css')));
      assert.ok(
        urls.some((u) => u.endsWith('/theme.css')),
        'APP_ACCENT_COLOR adds the theme',
      );
      assert.ok(urls.some((u) => u.endsWith('/sign-in.js')));
      const types: Record<string, string> = {
        css: 'text/css; charset=utf-8',
        js: 'text/javascript; charset=utf-8',
        svg: 'image/svg+xml',
      };
      for (const url of urls) {
        const res = await full.app.inject({ url });
        assert.equal(res.statusCode, 200, url);
        assert.equal(res.headers['content-type'], types[url.split('.').pop() as string]);
        assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
        assert.equal(res.headers['x-content-type-options'], 'nosniff');
        const etag = String(res.headers.etag);
        const again = await full.app.inject({ url, headers: { 'if-none-match': etag } });
        assert.equal(again.statusCode, 304);
      }
      const theme = await full.app.inject({ url: urls.find((u) => u.endsWith('/theme.css')) as string });
      assert.match(theme.body, /--accent: #8a2be2;/);
      const stale = await full.app.inject({ url: '/account/assets/000000000000/style.css' });
      assert.equal(stale.statusCode, 404);
      const html = await full.app.inject({ url: urls[0]?.replace(/[^/]+$/, 'sign-in.html') as string });
      assert.equal(html.statusCode, 400, 'fragments are not served');
      const traversal = await full.app.inject({ url: '/account/assets/0/..%2Fpackage.json' });
      assert.equal(traversal.statusCode, 400);
    });

    it('pages are not in the index', async () => {
      const index = json<{ documentation: Record<string, unknown> }>(await full.app.inject({ url: '/' }));
      assert.equal(index.documentation.pages, undefined);
      assert.doesNotMatch(JSON.stringify(index), /\/account/);
    });

    it("form A: a flow's page answers 404 while its module is off; sign-in and /account are there", async () => {
      const formA = await buildTestApp(dialect);
      try {
        for (const url of PAGES.slice(2)) {
          const res = await formA.app.inject({ url });
          assert.equal(res.statusCode, 404, url);
          assert.equal(json(res).code, 'module_disabled');
        }
        assert.equal((await formA.app.inject({ url: '/account/sign-in' })).statusCode, 200);
        const account = await formA.app.inject({ url: '/account' });
        assert.equal(account.statusCode, 200);
        assert.match(account.body, /data-modules="[^"]*\baccount\b/);
        assert.doesNotMatch(account.body, /data-modules="[^"]*\bmfa\b/);
      } finally {
        await formA.destroy();
      }
    });
  });
}

describe('web/: page fragments and scripts', () => {
  it('no fragment has an inline script, style, event handler or external URL; no script uses web storage', () => {
    const dir = new URL('../../web/', import.meta.url);
    for (const name of readdirSync(dir)) {
      const text = readFileSync(new URL(name, dir), 'utf8');
      if (name.endsWith('.html')) {
        assert.doesNotMatch(text, /<script|<style|\sstyle=|\son[a-z]+=|https?:\/\//i, name);
      }
      if (name.endsWith('.js')) {
        assert.doesNotMatch(
          text,
          /localStorage|sessionStorage|indexedDB|document\.cookie|innerHTML|eval\(/,
          name,
        );
        assert.doesNotMatch(text, /https?:\/\//, `${name}: an absolute URL`);
      }
    }
  });
});

describe('configuration of the pages', () => {
  const env = (extra: Record<string, string>) => testEnv('sqlite::memory:', extra);
  it('APP_NAME, APP_LOGO_URL and APP_ACCENT_COLOR are read and checked', () => {
    const config = loadConfig(
      env({
        APP_NAME: 'Acme ID',
        APP_LOGO_URL: 'https://cdn.acme.example/logo.svg',
        APP_ACCENT_COLOR: '#0a7c4a',
      }),
    );
    assert.equal(config.appName, 'Acme ID');
    assert.deepEqual(config.pages, { logoUrl: 'https://cdn.acme.example/logo.svg', accentColor: '#0a7c4a' });
    assert.equal(loadConfig(env({})).appName, 'Gatehouse');
    assert.equal(loadConfig(env({ APP_LOGO_URL: '/static/logo.png' })).pages.logoUrl, '/static/logo.png');
    for (const [name, value] of [
      ['APP_NAME', 'x'.repeat(81)],
      ['APP_LOGO_URL', 'http://insecure.example/logo.png'],
      ['APP_LOGO_URL', '//evil.example/logo.png'],
      ['APP_LOGO_URL', 'javascript:alert(1)'],
      ['APP_ACCENT_COLOR', 'red; background: url(x)'],
    ] as const) {
      assert.throws(
        () => loadConfig(env({ [name]: value })),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, new RegExp(`^${name} `));
          return true;
        },
      );
    }
  });
});
