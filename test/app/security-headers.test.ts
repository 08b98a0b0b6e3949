import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.ts';

// What @fastify/helmet sent before the headers were computed once at start (bench hot spot):
// the same set, on every response, successful or not.
const EXPECTED: Record<string, string> = {
  'content-security-policy':
    "default-src 'none';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'none';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self' https: 'unsafe-inline';upgrade-insecure-requests",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-site',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

describe('security headers', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp('sqlite');
  });
  after(() => t.destroy());

  for (const [what, url] of [
    ['liveness', '/health'],
    ['a 404', '/no-such-endpoint'],
    ['a 401', '/api/v1/verify-token'],
  ] as const) {
    it(`are all set on ${what}, with the request id`, async () => {
      const res = await t.app.inject({ url, headers: { 'x-request-id': 'req-123' } });
      for (const [name, value] of Object.entries(EXPECTED)) assert.equal(res.headers[name], value, name);
      assert.equal(res.headers['x-request-id'], 'req-123');
      assert.equal(res.headers['x-powered-by'], undefined);
    });
  }

  it('are loosened by the docs page for itself only', async () => {
    const res = await t.app.inject({ url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);
    assert.notEqual(res.headers['content-security-policy'], EXPECTED['content-security-policy']);
  });
});
