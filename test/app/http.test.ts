import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

// A generated id: 16 base64url characters (96 random bits).
const GENERATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.com';

for (const dialect of DIALECTS) {
  describe(`HTTP surface [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('echoes a well-formed X-Request-Id and generates one otherwise', async () => {
      for (const id of ['abc-123', 'req_01HX:9.z', 'a'.repeat(128)]) {
        const res = await t.app.inject({ url: '/health', headers: { 'x-request-id': id } });
        assert.equal(res.headers['x-request-id'], id);
      }
      for (const bad of ['', 'has space', '<script>', 'a'.repeat(129), 'ünïcode', 'a\tb']) {
        const res = await t.app.inject({ url: '/health', headers: { 'x-request-id': bad } });
        assert.match(String(res.headers['x-request-id']), GENERATED, `replaced ${JSON.stringify(bad)}`);
      }
      const none = await t.app.inject({ url: '/health' });
      assert.match(String(none.headers['x-request-id']), GENERATED);
      const other = await t.app.inject({ url: '/health' });
      assert.notEqual(other.headers['x-request-id'], none.headers['x-request-id']);
    });

    it('puts the request id on errors too, in the header and the body', async () => {
      const res = await t.app.inject({ url: '/missing', headers: { 'x-request-id': 'trace-42' } });
      assert.equal(res.headers['x-request-id'], 'trace-42');
      assert.equal(json(res).request_id, 'trace-42');
    });

    it('sends security headers: no X-Powered-By, nosniff, a strict CSP', async () => {
      for (const url of ['/health', '/', '/missing', '/openapi.json']) {
        const res = await t.app.inject({ url });
        assert.equal(res.headers['x-powered-by'], undefined, url);
        assert.equal(res.headers.server, undefined, url);
        assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
        const csp = String(res.headers['content-security-policy']);
        assert.match(csp, /default-src 'none'/, url);
        assert.match(csp, /frame-ancestors 'none'/, url);
        assert.doesNotMatch(csp, /script-src/, `${url}: nothing re-allows scripts on JSON`);
        assert.equal(res.headers['referrer-policy'], 'no-referrer', url);
      }
    });

    it('answers JSON as application/json; charset=utf-8', async () => {
      for (const url of ['/health', '/', '/api/v1', '/openapi.json']) {
        const res = await t.app.inject({ url });
        assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', url);
      }
    });

    it('sends no CORS headers when CORS_ORIGINS is not set', async () => {
      const res = await t.app.inject({ url: '/health', headers: { origin: APP } });
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/admin/modules/account',
        headers: { origin: APP, 'access-control-request-method': 'PUT' },
      });
      assert.equal(preflight.headers['access-control-allow-origin'], undefined);
      assert.equal(preflight.statusCode, 405);
    });

    it('serves OpenAPI 3.1 listing every route the index lists', async () => {
      const res = await t.app.inject({ url: '/openapi.json' });
      assert.equal(res.statusCode, 200);
      const spec = json<{
        openapi: string;
        info: { title: string; version: string };
        paths: Record<string, Record<string, { responses?: Record<string, unknown>; operationId?: string }>>;
      }>(res);
      assert.match(spec.openapi, /^3\.1\./);
      assert.equal(spec.info.title, 'Gatehouse');
      const index = json<{ documentation: Record<string, Record<string, string>> }>(
        await t.app.inject({ url: '/' }),
      );
      for (const [group, labels] of Object.entries(index.documentation)) {
        for (const [label, route] of Object.entries(labels)) {
          const [method, path] = route.split(' ') as [string, string];
          const openApiPath = path.replace(/<(\w+)>/g, '{$1}');
          const operation = spec.paths[openApiPath]?.[method.toLowerCase()];
          assert.ok(operation, `${route} is in /openapi.json`);
          assert.equal(operation.operationId, `${group}.${label}`);
          assert.ok(Object.keys(operation.responses ?? {}).length > 0, `${route} declares its responses`);
        }
      }
      assert.ok(spec.paths['/.well-known/jwks.json'], 'served-but-unlisted endpoints are documented too');
    });

    it('serves the docs page as HTML', async () => {
      const res = await t.app.inject({ url: '/docs' });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /<html/i);
      assert.ok(res.headers['content-security-policy'], 'the HTML page has a CSP');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    });
  });

  describe(`CORS with CORS_ORIGINS [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { CORS_ORIGINS: `${APP},https://admin.example.com` } });
    });
    after(() => t.destroy());

    it('allows a listed origin and exposes the useful headers', async () => {
      const res = await t.app.inject({ url: '/health', headers: { origin: APP } });
      assert.equal(res.headers['access-control-allow-origin'], APP);
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
      assert.match(String(res.headers['access-control-expose-headers']), /x-request-id/);
      assert.match(String(res.headers.vary), /Origin/);
    });

    it('answers a listed origin’s preflight for every method the API uses', async () => {
      const res = await t.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/admin/modules/account',
        headers: {
          origin: APP,
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      assert.equal(res.statusCode, 204);
      assert.equal(res.headers['access-control-allow-origin'], APP);
      const methods = String(res.headers['access-control-allow-methods']);
      for (const m of ['GET', 'POST', 'PUT', 'DELETE']) assert.ok(methods.includes(m), `${m} in ${methods}`);
      const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
      assert.ok(allowed.includes('authorization') && allowed.includes('content-type'));
    });

    it('gives other origins nothing', async () => {
      const res = await t.app.inject({ url: '/health', headers: { origin: OTHER } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/admin/modules/account',
        headers: { origin: OTHER, 'access-control-request-method': 'PUT' },
      });
      assert.equal(preflight.headers['access-control-allow-origin'], undefined);
      assert.equal(preflight.headers['access-control-allow-methods'], undefined);
      // Origins are compared exactly: no suffix or scheme tricks.
      for (const origin of [`${APP}.evil.com`, 'http://app.example.com', `${APP}:8443`, 'null']) {
        const r = await t.app.inject({ url: '/health', headers: { origin } });
        assert.equal(r.headers['access-control-allow-origin'], undefined, origin);
      }
    });

    it('keeps OPTIONS without Origin an ordinary problem', async () => {
      const res = await t.app.inject({ method: 'OPTIONS', url: '/nope' });
      assert.equal(res.statusCode, 404);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    });
  });
}
