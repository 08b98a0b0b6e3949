import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

/** The `msg` of every warning among JSON log lines. */
function warnings(lines: readonly string[]): string[] {
  return lines
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => l.level === 40)
    .map((l) => l.msg);
}

const LOCAL = 'http://localhost:3000';

// docs/pages.md, "One address": the server listens on 127.0.0.1 while PUBLIC_URL says localhost; a
// page opened on the other loopback name went on to refuse its own sign-in (403, Origin not
// PUBLIC_URL's). Now it is redirected to PUBLIC_URL's origin, same path and query.
for (const dialect of DIALECTS) {
  describe(`one address for the pages [${dialect}]`, () => {
    let t: TestApp;
    const lines: string[] = [];
    before(async () => {
      t = await buildTestApp(dialect, {
        env: { PUBLIC_URL: LOCAL, LOG_LEVEL: 'warn', SMTP_URL: 'smtp://127.0.0.1:1' },
        logLines: lines,
      });
    });
    after(() => t.destroy());
    const page = (url: string, host: string) => t.app.inject({ method: 'GET', url, headers: { host } });

    it('regression: /admin on 127.0.0.1 (the address the server printed) served a console whose sign-in was refused; now it redirects to PUBLIC_URL', async () => {
      for (const host of ['127.0.0.1:3000', '[::1]:3000']) {
        const res = await page('/admin?tab=users', host);
        assert.equal(res.statusCode, 307, host);
        assert.equal(res.headers.location, `${LOCAL}/admin?tab=users`);
        assert.equal(res.headers['cache-control'], 'no-store');
      }
      for (const path of ['/account/sign-in?next=/admin', '/account', '/account/reset-password/abc_DEF-1']) {
        const res = await page(path, '127.0.0.1:3000');
        assert.equal(res.statusCode, 307, path);
        assert.equal(res.headers.location, `${LOCAL}${path}`);
      }
    });

    it('PUBLIC_URL’s own host, another port, the API and the pages’ files are not redirected', async () => {
      assert.equal((await page('/admin', 'localhost:3000')).statusCode, 200);
      assert.equal((await page('/admin', '127.0.0.1:4000')).statusCode, 200, 'another port: another server');
      const api = await page('/api/v1', '127.0.0.1:3000');
      assert.equal(api.statusCode, 200, 'API clients call any address');
      assert.equal(json(api).status, 'running');
      const health = await page('/health', '127.0.0.1:3000');
      assert.equal(health.statusCode, 200);
      const html = (await page('/admin', 'localhost:3000')).body;
      const asset = /href="(\/admin\/assets\/[0-9a-f]+\/style\.css)"/.exec(html)?.[1];
      assert.ok(asset, 'the console links its stylesheet');
      assert.equal((await page(asset, '127.0.0.1:3000')).statusCode, 200);
    });

    it('the redirect is logged once, not per request', async () => {
      for (let i = 0; i < 3; i++) await page('/admin', '127.0.0.1:3000');
      const found = warnings(lines).filter((m) => m.startsWith('pages were requested at'));
      assert.equal(found.length, 1, lines.join('\n'));
      assert.match(found[0] ?? '', /^pages were requested at http:\/\/127\.0\.0\.1:3000, not at PUBLIC_URL/);
    });
  });

  describe(`where a page cannot redirect [${dialect}]`, () => {
    let t: TestApp;
    const lines: string[] = [];
    before(async () => {
      t = await buildTestApp(dialect, {
        env: { PUBLIC_URL: LOCAL, LOG_LEVEL: 'warn', SMTP_URL: 'smtp://127.0.0.1:1' },
        logLines: lines,
      });
    });
    after(() => t.destroy());

    it('another host is served as is; its sign-in gets a plain sentence, the log one technical warning', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/admin', headers: { host: '192.0.2.7:3000' } });
      assert.equal(res.statusCode, 200, 'not redirected: that host may be a proxy or the only way in');
      for (let i = 0; i < 3; i++) {
        const login = await t.app.inject({
          method: 'POST',
          url: '/api/v1/login',
          headers: {
            host: '192.0.2.7:3000',
            origin: 'http://192.0.2.7:3000',
            'x-gatehouse-session': 'cookie',
          },
          payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
        });
        assert.equal(login.statusCode, 403);
        assert.equal(json(login).code, 'forbidden');
        assert.equal(
          json(login).detail,
          `Signing in works only at ${LOCAL}. Open this page there and try again.`,
        );
      }
      const found = warnings(lines).filter((m) => m.startsWith('a browser session was refused'));
      assert.equal(found.length, 1, lines.join('\n'));
      const entry = lines
        .map((l) => JSON.parse(l))
        .find((l) => String(l.msg).startsWith('a browser session'));
      assert.equal(entry.origin, 'http://192.0.2.7:3000');
      assert.equal(entry.public_url, LOCAL);
    });

    it('PUBLIC_URL on a real host name: loopback requests are not redirected (a proxy in front)', async () => {
      const behind = await buildTestApp(dialect, { env: { PUBLIC_URL: 'https://id.example.com' } });
      try {
        const res = await behind.app.inject({
          method: 'GET',
          url: '/admin',
          headers: { host: '127.0.0.1:3000' },
        });
        assert.equal(res.statusCode, 200);
      } finally {
        await behind.destroy();
      }
    });
  });
}
