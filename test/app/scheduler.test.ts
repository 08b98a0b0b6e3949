// The one scheduler of background jobs (src/kernel/scheduler.ts) and its report in /health/detailed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MODULES } from '../../src/kernel/registry.ts';
import { createScheduler } from '../../src/kernel/scheduler.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

/** Waits until `check` holds, polling; fails after many tries (no assertion on elapsed time). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await sleep(10);
  }
  assert.fail(`never: ${what}`);
}

describe('the scheduler', () => {
  it('reports each run and the last failure, goes on after a failure, and never overlaps a run', async () => {
    const jobs = createScheduler(createLogger('silent'));
    let runs = 0;
    let running = 0;
    let overlapped = false;
    jobs.start({
      name: 'test.flaky',
      what: 'flaky test job',
      everyMs: 5,
      run: async () => {
        runs++;
        if (running > 0) overlapped = true;
        running++;
        await sleep(20);
        running--;
        if (runs === 1) throw new Error('first run fails');
      },
    });
    const before = jobs.report()['test.flaky'];
    assert.deepEqual(before, { every_s: 0.005, last_run_at: null, last_error_at: null });
    await until(() => runs >= 3 && running === 0, 'three runs');
    const report = jobs.report()['test.flaky'];
    assert.ok(report && report.last_run_at !== null && report.last_error_at !== null, JSON.stringify(report));
    assert.ok(Date.parse(report.last_run_at) >= Date.parse(report.last_error_at));
    assert.equal(overlapped, false, 'a run still going when the next is due is skipped');
    await jobs.stop();
  });

  it('stop() waits for the run in progress and no run starts afterwards', async () => {
    const jobs = createScheduler(createLogger('silent'));
    let started = 0;
    let finished = 0;
    jobs.start({
      name: 'test.slow',
      what: 'slow test job',
      everyMs: 5,
      run: async () => {
        started++;
        await sleep(30);
        finished++;
      },
    });
    await until(() => started === 1, 'a run started');
    await jobs.stop();
    assert.equal(finished, started, 'the run in progress ended before stop() returned');
    const after = started;
    await sleep(50);
    assert.equal(started, after, 'no run after stop()');
  });
});

for (const dialect of DIALECTS) {
  describe(`/health/detailed checks.jobs [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it("lists every module's jobs with period, last run and last failure, and leaves the status alone", async () => {
      const res = await t.app.inject({ url: '/health/detailed' });
      assert.equal(res.statusCode, 200);
      const body = json<{ status: string; checks: { jobs: Record<string, unknown> } }>(res);
      assert.equal(body.status, 'ok');
      const { status, ...jobs } = body.checks.jobs;
      assert.equal(status, 'ok');
      const declared = MODULES.flatMap((m) => (m.jobs ?? []).map((j) => j.name));
      assert.deepEqual(Object.keys(jobs), declared);
      assert.ok(declared.includes('core.module_switches') && declared.includes('audit.retention'));
      for (const [name, report] of Object.entries(jobs)) {
        assert.deepEqual(
          Object.keys(report as object).sort(),
          ['every_s', 'last_error_at', 'last_run_at'],
          name,
        );
      }
    });
  });
}
