import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, type TestApp } from '../helpers/app.ts';

// A JSON API's set, computed once at start (bench hot spot): the strict CSP exactly as written
// (helmet's HTML defaults used to loosen it with script-src 'self' and friends), on every response.
const EXPECTED: Record<string, string> = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'cross-origin-resource-policy': 'same-site',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};
const DOCUMENT_ONLY = [
  'cross-origin-opener-policy',
  'origin-agent-cluster',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
  'x-powered-by',
];

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
      for (const name of DOCUMENT_ONLY) assert.equal(res.headers[name], undefined, name);
    });
  }

  it('are loosened by the docs page for itself only', async () => {
    const res = await t.app.inject({ url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);
    assert.notEqual(res.headers['content-security-policy'], EXPECTED['content-security-policy']);
  });
});

describe('Cache-Control: no-store', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp('sqlite');
  });
  after(() => t.destroy());

  it('is on every response that carries tokens or is about the caller, refusals included', async () => {
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/login',
      payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    });
    assert.equal(login.statusCode, 200);
    const { access_token, refresh_token } = login.json<{ access_token: string; refresh_token: string }>();
    const bearer = { authorization: `Bearer ${access_token}` };
    const responses = [
      login,
      await t.app.inject({ method: 'POST', url: '/api/v1/refresh-token', payload: { refresh_token } }),
      await t.app.inject({ url: '/api/v1/verify-token', headers: bearer }),
      await t.app.inject({ url: '/api/v1/users', headers: bearer }),
      await t.app.inject({ url: '/api/v1/verify-token' }),
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: ADMIN_EMAIL, password: 'x' },
      }),
    ];
    for (const [i, res] of responses.entries())
      assert.equal(res.headers['cache-control'], 'no-store', `response ${i}`);
  });

  it('is not forced on public answers that hold nothing about anyone', async () => {
    assert.equal((await t.app.inject({ url: '/health' })).headers['cache-control'], undefined);
    const jwks = await t.app.inject({ url: '/.well-known/jwks.json' });
    assert.equal(jwks.headers['cache-control'], 'public, max-age=300');
  });
});
