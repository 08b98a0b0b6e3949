import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';

// Under pressure (event-loop delay, heap, RSS over their limits) every request but liveness gets
// 503 `unavailable` with Retry-After. Pressure is sampled about once a second, so the tests poll.

async function until503(t: TestApp, url: string, squeeze: () => void = () => {}) {
  for (let attempt = 0; attempt < 100; attempt++) {
    squeeze();
    await sleep(100);
    const res = await t.app.inject({ url, headers: { 'x-request-id': 'shed-1' } });
    if (res.statusCode === 503) return res;
    assert.equal(res.statusCode, 200);
  }
  throw new Error('the service never reported pressure');
}

function assertShed(res: Awaited<ReturnType<typeof until503>>) {
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.headers['retry-after'], '5');
  assert.equal(res.headers['x-request-id'], 'shed-1');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  const body = json(res);
  assert.equal(body.code, 'unavailable');
  assert.equal(body.status, 503);
  assert.equal(body.request_id, 'shed-1');
  assert.match(String(body.detail), /under pressure/);
}

describe('load shedding: memory', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp('sqlite', { env: { PRESSURE_MAX_HEAP_USED_MB: '1' } });
  });
  after(() => t.destroy());

  it('answers 503 problem+json with Retry-After once the heap is over its limit', async () => {
    assertShed(await until503(t, '/api/v1'));
  });

  it('keeps liveness answering under pressure', async () => {
    await until503(t, '/api/v1');
    const res = await t.app.inject({ url: '/health' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(json(res), { status: 'ok' });
  });

  it('regression: takes readiness (/health/detailed) down while shedding, so no traffic is sent', async () => {
    /* ready-under-load: readiness answers 200 only while requests are served (docs/operations.md,
       "Readiness"); liveness stays 200 meanwhile. */
    assertShed(await until503(t, '/health/detailed'));
    assert.equal((await t.app.inject({ url: '/health' })).statusCode, 200);
  });
});

describe('load shedding: event-loop delay', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp('sqlite', { env: { PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '1' } });
  });
  after(() => t.destroy());

  it('answers 503 once the event loop has been blocked', async () => {
    const block = () => {
      const end = performance.now() + 300;
      while (performance.now() < end) {
        // Busy: nothing else runs on the loop meanwhile, which is the point.
      }
    };
    assertShed(await until503(t, '/api/v1', block));
  });
});

describe('load shedding settings', () => {
  it('defaults to a 200 ms event-loop delay limit, 90% of the heap limit and no RSS limit', () => {
    const { pressure } = loadConfig({});
    assert.deepEqual(pressure, { maxEventLoopDelayMs: 200, maxHeapUsedMb: null, maxRssMb: 0 });
  });

  it('refuses limits that are not whole numbers', () => {
    assert.throws(() => loadConfig({ PRESSURE_MAX_RSS_MB: 'lots' }), ConfigError);
    assert.throws(() => loadConfig({ PRESSURE_MAX_HEAP_USED_MB: '-1' }), ConfigError);
  });
});
