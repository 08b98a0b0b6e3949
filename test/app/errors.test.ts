import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { toApiError } from '../../src/http/errors.ts';
import { parseJsonBody } from '../../src/http/json-body.ts';
import { ApiError } from '../../src/platform/api-error.ts';
import { ERROR_CODES } from '../../src/platform/error-codes.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  errors?: Array<{ path: string; message: string }>;
  request_id: string;
}

/** Asserts an RFC 9457 problem response with a code from the closed table; returns its body. */
function assertProblem(res: LightMyRequestResponse, status: number, code: string): Problem {
  assert.equal(res.statusCode, status, `status for ${code}: ${res.body}`);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  const body = json<Problem>(res);
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(body.type, `https://gatehouse.dev/problems/${code}`);
  assert.equal(body.title, ERROR_CODES[code as keyof typeof ERROR_CODES].title);
  assert.equal(ERROR_CODES[code as keyof typeof ERROR_CODES].status, status, 'code and status agree');
  assert.equal(body.request_id, res.headers['x-request-id'], 'request_id is the X-Request-Id');
  assert.doesNotMatch(res.body, /\bat .+:\d+:\d+|node_modules|FST_/, 'no stack, no framework internals');
  return body;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const TOGGLE = '/api/v1/admin/modules/account';

for (const dialect of DIALECTS) {
  describe(`errors [${dialect}]`, () => {
    let t: TestApp;
    let admin: { authorization: string };
    before(async () => {
      t = await buildTestApp(dialect);
      admin = await authHeaders(t, await firstAdmin(t));
    });
    after(() => t.destroy());

    const put = (payload: string, headers: Record<string, string> = JSON_HEADERS) =>
      t.app.inject({ method: 'PUT', url: TOGGLE, headers: { ...admin, ...headers }, payload });

    it('unknown route: 404 not_found', async () => {
      assertProblem(await t.app.inject({ url: '/no/such/thing' }), 404, 'not_found');
      assertProblem(await t.app.inject({ method: 'POST', url: '/api/v2/login' }), 404, 'not_found');
    });

    it('wrong method on a known path: 405 method_not_allowed with Allow', async () => {
      const res = await t.app.inject({ method: 'DELETE', url: '/health' });
      assertProblem(res, 405, 'method_not_allowed');
      assert.equal(res.headers.allow, 'GET, HEAD');
      const param = await t.app.inject({ method: 'POST', url: '/api/v1/admin/modules/account' });
      assertProblem(param, 405, 'method_not_allowed');
      assert.equal(param.headers.allow, 'PUT');
      const index = await t.app.inject({ method: 'POST', url: '/api/v1' });
      assertProblem(index, 405, 'method_not_allowed');
      assert.equal(index.headers.allow, 'GET, HEAD');
      // Without CORS_ORIGINS an OPTIONS is just another method the path does not have.
      const options = await t.app.inject({ method: 'OPTIONS', url: '/health' });
      assertProblem(options, 405, 'method_not_allowed');
    });

    it('HEAD is answered wherever GET is, with no body', async () => {
      for (const url of ['/health', '/', '/api/v1']) {
        const res = await t.app.inject({ method: 'HEAD', url });
        assert.equal(res.statusCode, 200, url);
        assert.equal(res.body, '');
        assert.ok(res.headers['x-request-id']);
      }
      const missing = await t.app.inject({ method: 'HEAD', url: '/nope' });
      assert.equal(missing.statusCode, 404);
    });

    it('a trailing slash is another path: 404, never a misleading 405', async () => {
      assertProblem(await t.app.inject({ url: '/health/' }), 404, 'not_found');
      assertProblem(await t.app.inject({ url: '/api/v1/' }), 404, 'not_found');
      assertProblem(await t.app.inject({ url: '/api/v1/admin/modules/' }), 404, 'not_found');
    });

    it('malformed and very long URLs: 404 not_found as problem+json, request id kept', async () => {
      const bad = await t.app.inject({ url: '/%zz', headers: { 'x-request-id': 'trace-bad-url' } });
      assertProblem(bad, 404, 'not_found');
      assert.equal(bad.headers['x-request-id'], 'trace-bad-url');
      assert.match(String(bad.headers['content-security-policy']), /default-src 'none'/);
      assertProblem(await t.app.inject({ url: `/${'a'.repeat(100_000)}` }), 404, 'not_found');
      const longParam = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/admin/modules/${'m'.repeat(2000)}`,
        headers: { ...admin, ...JSON_HEADERS },
        payload: '{"enabled":true}',
      });
      assertProblem(longParam, 404, 'not_found');
    });

    it('invalid JSON: 400 invalid_json', async () => {
      for (const payload of ['{', '{"enabled":true,}', "{'enabled':true}", 'true false', ' ']) {
        assertProblem(await put(payload), 400, 'invalid_json');
      }
    });

    it('prototype-poisoning keys: 400 invalid_json that says which key', async () => {
      for (const [payload, key] of [
        ['{"enabled":true,"__proto__":{"admin":true}}', '__proto__'],
        ['{"a":[{"b":{"__proto__":{}}}]}', '__proto__'],
        ['{"\\u005f_proto__":{}}', '__proto__'],
        ['{"constructor":{"prototype":{"admin":true}}}', 'constructor.prototype'],
      ] as const) {
        const body = assertProblem(await put(payload), 400, 'invalid_json');
        assert.match(body.detail ?? '', new RegExp(key.replace('.', '\\.')));
      }
      // A field merely named "constructor" is no poisoning: it is refused as an unknown field.
      const plain = assertProblem(await put('{"enabled":true,"constructor":1}'), 400, 'validation_failed');
      assert.deepEqual(plain.errors, [{ path: '/constructor', message: 'is not an allowed field' }]);
    });

    it('empty body with Content-Type: application/json counts as no body', async () => {
      const body = assertProblem(await put(''), 400, 'validation_failed');
      assert.match(body.detail ?? '', /^body /);
      assert.deepEqual(parseJsonBody(''), undefined);
    });

    it('wrong content type: 415 unsupported_media_type', async () => {
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/jsonx',
      ]) {
        assertProblem(await put('{"enabled":true}', { 'content-type': type }), 415, 'unsupported_media_type');
      }
      // Parameters on the JSON type are fine.
      const ok = await put('{"enabled":true}', { 'content-type': 'application/json; charset=utf-8' });
      assert.equal(ok.statusCode, 200);
    });

    it('bodies over 64 KiB: 413 payload_too_large; exactly 64 KiB is read', async () => {
      const sized = (n: number) => {
        const head = '{"enabled":true,"pad":"';
        return `${head}${'x'.repeat(n - head.length - 2)}"}`;
      };
      assert.equal(sized(65_536).length, 65_536);
      assertProblem(await put(sized(65_537)), 413, 'payload_too_large');
      // At the limit the body is parsed, then refused for its unknown field, not its size.
      assertProblem(await put(sized(65_536)), 400, 'validation_failed');
    });

    it('schema validation: 400 validation_failed with errors[]', async () => {
      const wrongType = assertProblem(await put('{"enabled":"yes"}'), 400, 'validation_failed');
      assert.deepEqual(wrongType.errors, [{ path: '/enabled', message: 'must be boolean' }]);
      assert.equal(wrongType.detail, 'body/enabled must be boolean');
      const missing = assertProblem(await put('{}'), 400, 'validation_failed');
      assert.deepEqual(missing.errors, [{ path: '/enabled', message: 'is required' }]);
      const notObject = assertProblem(await put('[true]'), 400, 'validation_failed');
      assert.equal(notObject.errors?.[0]?.path, '');
    });

    it('unknown field: 400 validation_failed naming it', async () => {
      // Not `force`: docs/api.md §16 made it a field of this body.
      const body = assertProblem(await put('{"enabled":true,"quietly":true}'), 400, 'validation_failed');
      assert.deepEqual(body.errors, [{ path: '/quietly', message: 'is not an allowed field' }]);
    });

    it('a deeply nested body is refused cleanly, never a 500', async () => {
      const deep = `{"enabled":true,"x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
      assertProblem(await put(deep), 400, 'validation_failed');
    });

    it('authentication and authorization errors are problems too', async () => {
      const none = await t.app.inject({ url: '/api/v1/admin/modules' });
      assertProblem(none, 401, 'unauthenticated');
      assert.match(String(none.headers['www-authenticate']), /^Bearer /);
      const garbage = await t.app.inject({
        url: '/api/v1/admin/modules',
        headers: { authorization: 'Bearer not.a.jwt' },
      });
      assertProblem(garbage, 401, 'token_invalid');
      assert.match(String(garbage.headers['www-authenticate']), /error="invalid_token"/);
    });
  });
}

describe('error mapping', () => {
  it('an unexpected error becomes 500 internal_error without its message', () => {
    const err = toApiError(new Error('SELECT secret FROM users -- at db.ts:12:3'));
    assert.equal(err.code, 'internal_error');
    assert.equal(err.status, 500);
    assert.equal(err.detail, undefined);
  });

  it('every code of the table maps to its status', () => {
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      assert.equal(new ApiError(code as keyof typeof ERROR_CODES).status, status);
    }
  });
});

describe('errors on a real socket', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await buildTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  after(() => t.destroy());

  /** Sends raw bytes and returns the raw response. */
  function raw(bytes: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let out = '';
      socket.on('data', (d) => {
        out += d;
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(out));
      socket.end(bytes);
    });
  }

  it('headers over 16 KiB: 400 validation_failed as problem+json', async () => {
    const res = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(res, /^HTTP\/1\.1 400 /);
    assert.match(res, /content-type: application\/problem\+json/i);
    assert.match(res, /x-request-id: [0-9a-f-]{36}\r\n/i);
    const body = JSON.parse(res.slice(res.indexOf('\r\n\r\n') + 4)) as Problem;
    assert.equal(body.code, 'validation_failed');
  });

  it('a request that is not HTTP: 400 validation_failed as problem+json', async () => {
    const res = await raw('HELLO THERE\r\n\r\n');
    assert.match(res, /^HTTP\/1\.1 400 /);
    assert.match(res, /"code":"validation_failed"/);
  });

  it('an ordinary request still works on the same server', async () => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      httpRequest({ port, host: '127.0.0.1', path: '/health' }, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
        .on('error', reject)
        .end();
    });
    assert.equal(status, 200);
  });
});
