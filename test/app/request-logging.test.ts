import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { type Service, startService } from '../../src/kernel/server.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger, lazyChildLogger } from '../../src/platform/logger.ts';
import { testEnv } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

// Request logging was most of a /health request's cost (bench): at info, successful requests log
// nothing and refusals log one line; at debug, every request logs one line. Lines carry the request id.

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { stream, lines };
}

for (const level of ['info', 'debug'] as const) {
  describe(`request logging at ${level}`, () => {
    let db: TestDatabase;
    let service: Service;
    const log = capture();
    before(async () => {
      db = await createTestDatabase('sqlite');
      const config = loadConfig(testEnv(db.url, { LOG_LEVEL: level }));
      service = await startService(config, createLogger(level, log.stream));
      await service.app.ready();
    });
    after(async () => {
      await service.close();
      await db.drop();
    });

    const linesFor = (reqId: string) => log.lines().filter((l) => l.reqId === reqId);

    it(level === 'info' ? 'logs nothing for a successful request' : 'logs one line per request', async () => {
      const res = await service.app.inject({ url: '/health', headers: { 'x-request-id': `ok-${level}` } });
      assert.equal(res.statusCode, 200);
      const lines = linesFor(`ok-${level}`);
      if (level === 'info') assert.deepEqual(lines, []);
      else {
        assert.equal(lines.length, 1);
        assert.equal(lines[0]?.msg, 'request completed');
        assert.deepEqual(lines[0]?.res, { status: 200 });
      }
    });

    it('logs a refusal with its request id and without the token', async () => {
      const res = await service.app.inject({
        url: '/api/v1/verify-token',
        headers: { 'x-request-id': `no-${level}`, authorization: 'Bearer not.a.token' },
      });
      assert.equal(res.statusCode, 401);
      const refused = linesFor(`no-${level}`).filter((l) => l.msg === 'request refused');
      assert.equal(refused.length, 1);
      assert.equal(refused[0]?.code, 'token_invalid');
      assert.ok(!JSON.stringify(log.lines()).includes('not.a.token'));
    });
  });
}

describe('lazy request child logger', () => {
  it('makes the child only when something is logged, with the parent bindings and its own', () => {
    const log = capture();
    const parent = createLogger('info', log.stream);
    let made = 0;
    const counting = Object.create(parent, {
      child: {
        value: (b: Record<string, unknown>, o?: object) => {
          made++;
          return parent.child(b, o);
        },
      },
    });
    const lazy = lazyChildLogger(counting, { reqId: 'r1' }, {});
    assert.equal(made, 0);
    lazy.debug('below the level');
    assert.equal(lazy.level, 'info');
    lazy.info({ body: { password: 'hunter2' } }, 'hello');
    lazy.child({ part: 'x' }).warn('nested');
    assert.equal(made, 1);
    const [hello, nested] = log.lines();
    assert.equal(hello?.reqId, 'r1');
    assert.deepEqual(hello?.body, { password: '[redacted]' });
    assert.equal(nested?.reqId, 'r1');
    assert.equal(nested?.part, 'x');
  });
});
