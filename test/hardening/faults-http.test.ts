import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, PUBLIC_URL } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { rawBody, rawExchange } from '../helpers/raw-http.ts';
import { type ServiceProcess, startServiceProcess } from '../support/service-process.ts';

/*
 * Slow and oversized clients against the real process on a real socket: a body or headers that
 * trickle in slower than REQUEST_TIMEOUT_MS / HEADERS_TIMEOUT_MS are cut (a 400 problem, as 408 has no
 * code in docs/api.md §9, and the connection closed);
 * bodies over 64 KiB get 413 `payload_too_large`, whether the Content-Length says so, lies, or the
 * body comes chunked; ambiguous framing is refused. The service stays healthy throughout.
 */
const LIMIT = 64 * 1024;

describe('slow and oversized clients (real process)', () => {
  let database: TestDatabase;
  let svc: ServiceProcess;

  before(async () => {
    database = await createTestDatabase('sqlite');
    svc = await startServiceProcess({
      DATABASE_URL: database.url,
      PUBLIC_URL,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      REQUEST_TIMEOUT_MS: '1500',
      HEADERS_TIMEOUT_MS: '1000',
      LOG_LEVEL: 'warn',
    });
  });
  after(async () => {
    if (svc) assert.equal(await svc.stop(), 0, svc.output());
    await database?.drop();
  });

  /** After every abuse: still alive and serving real work. */
  async function stillServing(): Promise<void> {
    assert.equal((await fetch(`${svc.url}/health`)).status, 200);
    const login = await fetch(`${svc.url}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    assert.equal(login.status, 200);
  }

  /** The client error handler's answer to a deadline missed: 400 validation_failed, problem+json. */
  const assertTimedOut = (res: { status: number | null; response: string }) => {
    assert.equal(res.status, 400, res.response);
    assert.match(res.response, /content-type: application\/problem\+json/i);
    const body = JSON.parse(rawBody(res.response)) as { code: string; detail: string };
    assert.equal(body.code, 'validation_failed');
    assert.match(body.detail, /did not arrive in time/);
  };

  const post = (extra: string) =>
    `POST /api/v1/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}\r\n`;

  it('cuts a body that trickles in slower than the request timeout', async () => {
    // 1000 bytes at one per 100 ms would take 100 s; the request timeout is 1.5 s.
    const chunks = Array.from({ length: 1000 }, () => ' ');
    const res = await rawExchange(svc.port, post('Content-Length: 1000\r\n'), chunks, {
      intervalMs: 100,
      deadlineMs: 20_000,
    });
    assert.ok(res.closedByServer, 'the server closed the connection');
    assert.ok(res.chunksSent < chunks.length, `cut after ${res.chunksSent} of ${chunks.length} bytes`);
    assertTimedOut(res);
    await stillServing();
  });

  it('cuts headers that trickle in slower than the headers timeout (slowloris)', async () => {
    const chunks = Array.from({ length: 300 }, (_, i) => `X-Slow-${i}: a\r\n`);
    const res = await rawExchange(svc.port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n', chunks, {
      intervalMs: 100,
      deadlineMs: 20_000,
    });
    assert.ok(res.closedByServer, 'the server closed the connection');
    assert.ok(res.chunksSent < chunks.length, `cut after ${res.chunksSent} of ${chunks.length} header lines`);
    assertTimedOut(res);
    await stillServing();
  });

  it('answers 413 problem+json to a body over 64 KiB, and takes one of exactly 64 KiB', async () => {
    const body = (size: number) => {
      const shell = JSON.stringify({ email: 'a@example.com', password: '' });
      return shell.replace('"password":""', `"password":"${'p'.repeat(size - shell.length)}"`);
    };
    const over = await fetch(`${svc.url}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(LIMIT + 1),
    });
    assert.equal(over.status, 413);
    assert.match(String(over.headers.get('content-type')), /^application\/problem\+json/);
    assert.equal(((await over.json()) as { code: string }).code, 'payload_too_large');
    const exact = await fetch(`${svc.url}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(LIMIT),
    });
    // Read whole and validated: the password is over 256 characters, a 400, not a 413.
    assert.equal(exact.status, 400);
    await stillServing();
  });

  it('answers 413 at once to a Content-Length over the limit, without waiting for the body', async () => {
    const res = await rawExchange(svc.port, post('Content-Length: 1000000000\r\n'), ['{"email":'], {
      intervalMs: 0,
      deadlineMs: 10_000,
    });
    assert.equal(res.status, 413, res.response);
    assert.equal((JSON.parse(rawBody(res.response)) as { code: string }).code, 'payload_too_large');
    await stillServing();
  });

  it('answers 413 to a chunked body once it passes 64 KiB, and stops reading', async () => {
    const chunk = `400\r\n${' '.repeat(1024)}\r\n`;
    const chunks = Array.from({ length: 1024 }, () => chunk); // 1 MiB if it were all read
    const res = await rawExchange(svc.port, post('Transfer-Encoding: chunked\r\n'), chunks, {
      intervalMs: 1,
      deadlineMs: 15_000,
    });
    assert.equal(res.status, 413, res.response.slice(0, 300));
    assert.equal((JSON.parse(rawBody(res.response)) as { code: string }).code, 'payload_too_large');
    assert.ok(res.chunksSent < chunks.length, `stopped after ${res.chunksSent} KiB of 1024`);
    await stillServing();
  });

  it('never serves the bytes past an understated Content-Length as a second request', async () => {
    const smuggled = 'GET /api/v1/profile HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const res = await rawExchange(
      svc.port,
      post('Content-Length: 2\r\n'),
      [`{}${'x'.repeat(100_000)}${smuggled}`],
      {
        intervalMs: 0,
        deadlineMs: 10_000,
      },
    );
    // The bytes after the declared two are not HTTP: the parser refuses them (400) and hangs up.
    assert.equal(res.status, 400, res.response.slice(0, 300));
    assert.ok(res.closedByServer);
    assert.doesNotMatch(
      res.response,
      /HTTP\/1\.1 (200|401)/,
      'the trailing bytes were never served as a request',
    );
    await stillServing();
  });

  it('refuses ambiguous framing (Content-Length with Transfer-Encoding) with 400 and a closed connection', async () => {
    const res = await rawExchange(
      svc.port,
      post('Content-Length: 4\r\nTransfer-Encoding: chunked\r\n'),
      ['0\r\n\r\nGET /api/v1/profile HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
      { intervalMs: 0, deadlineMs: 10_000 },
    );
    assert.equal(res.status, 400, res.response);
    assert.ok(res.closedByServer);
    assert.doesNotMatch(res.response, /HTTP\/1\.1 401/);
    await stillServing();
  });
});

describe('REQUEST_TIMEOUT_MS and HEADERS_TIMEOUT_MS', () => {
  it('default to 30 s and 10 s, and a headers deadline past the request deadline stops the start', () => {
    const config = loadConfig({});
    assert.equal(config.requestTimeoutMs, 30_000);
    assert.equal(config.headersTimeoutMs, 10_000);
    assert.equal(loadConfig({ REQUEST_TIMEOUT_MS: '2000' }).headersTimeoutMs, 2000);
    assert.throws(
      () => loadConfig({ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '2000' }),
      (err: unknown) => err instanceof ConfigError && /^HEADERS_TIMEOUT_MS/.test(err.message),
    );
    assert.throws(
      () => loadConfig({ REQUEST_TIMEOUT_MS: 'soon' }),
      /REQUEST_TIMEOUT_MS must be a whole number/,
    );
  });
});
