import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.ts';

const require = createRequire(import.meta.url);

/** Whether a package has been loaded into this process (CommonJS, as these are). */
function loaded(pkg: string): boolean {
  return Object.keys(require.cache).some((file) => file.includes(`/node_modules/${pkg}/`));
}

// One app in this file's own process: the module cache says what starting the service loaded.
describe('docs (/openapi.json, /docs)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp('sqlite');
  });
  after(() => t.destroy());

  // Pins: nodemailer was loaded at every start without SMTP_URL.
  it('starts without loading nodemailer (no SMTP_URL)', () => {
    assert.equal(loaded('nodemailer'), false, 'nodemailer is loaded at start');
  });

  it('serves the page, its assets and the document', async () => {
    const page = await t.app.inject({ url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
    const spec = await t.app.inject({ url: '/openapi.json' });
    assert.equal(spec.statusCode, 200);
    assert.deepEqual(JSON.parse((await t.app.inject({ url: '/docs/json' })).body), JSON.parse(spec.body));
    const css = await t.app.inject({ url: '/docs/static/swagger-ui.css' });
    assert.equal(css.statusCode, 200);
    assert.match(String(css.headers['content-type']), /^text\/css/);
    assert.equal(Number(css.headers['content-length']), css.rawPayload.length);
    const head = await t.app.inject({ method: 'HEAD', url: '/docs/static/swagger-ui.css' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], css.headers['content-length']);
    assert.equal(head.body, '');
    const again = await t.app.inject({
      url: '/docs/static/swagger-ui.css',
      headers: { 'if-none-match': String(css.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
  });

  it('redirects without a body and answers unknown paths with the ordinary 404 problem', async () => {
    const redirect = await t.app.inject({ url: '/docs/static/index.html' });
    assert.equal(redirect.statusCode, 302);
    assert.equal(redirect.headers.location, '/docs/');
    assert.equal(redirect.headers['content-type'], undefined);
    for (const url of ['/docs/nope', '/docs/static/nope.js', '/docs/static/../../package.json']) {
      const res = await t.app.inject({ url, headers: { 'x-request-id': 'docs-404' } });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8', url);
      assert.equal(JSON.parse(res.body).request_id, 'docs-404', url);
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'/, url);
    }
    assert.equal((await t.app.inject({ method: 'POST', url: '/docs' })).statusCode, 404);
  });
});
