import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_EMAIL, ADMIN_PASSWORD, PUBLIC_URL } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, startServiceProcess } from '../support/service-process.ts';

/*
 * ready-under-load: on a busy host the start-up work (loading modules, compiling every route's
 * schemas) counted as event-loop lag, so the first requests after /health first answered 200 were
 * shed with 503 "the event loop is overloaded" in most fresh starts. Now the lag is sampled from
 * the moment the app is ready (docs/operations.md, "Readiness"): the first login after ready is
 * served, and so is everything in the seconds after it, with the default 200 ms limit on.
 */

/** A bounded busy loop in a child process: one per core, each killed by its PID after the test. */
function cpuHog(seconds: number): ChildProcess {
  const code = `const end = Date.now() + ${seconds * 1000}; while (Date.now() < end) {}`;
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
}

for (const dialect of DIALECTS) {
  describe(`ready means ready: a fresh start on a busy host [${dialect}]`, () => {
    let database: TestDatabase;
    let svc: ServiceProcess | undefined;
    const hogs: ChildProcess[] = [];

    before(async () => {
      database = await createTestDatabase(dialect);
      hogs.push(cpuHog(90), cpuHog(90));
      svc = await startServiceProcess(
        {
          DATABASE_URL: database.url,
          PUBLIC_URL,
          ADMIN_EMAIL,
          ADMIN_PASSWORD,
          // The default limit, on (the helper turns it off for every other process test).
          PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '200',
          LOG_LEVEL: 'warn',
        },
        600, // a slow start under the hogs: up to 60 s
      );
    });
    after(async () => {
      for (const hog of hogs)
        if (hog.pid !== undefined && hog.exitCode === null) process.kill(hog.pid, 'SIGKILL');
      if (svc) assert.equal(await svc.stop(), 0, svc.output());
      await database?.drop();
    });

    it('regression: serves the first login after /health answers, and every request in the seconds after', async () => {
      assert.ok(svc);
      const login = await fetch(`${svc.url}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
      });
      assert.equal(login.status, 200, await login.clone().text());
      // The start-up lag used to be shed for up to a sampling interval after the sample that saw it.
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) {
        statuses.push((await fetch(`${svc.url}/api/v1`)).status);
        await sleep(100);
      }
      assert.deepEqual(
        statuses,
        statuses.map(() => 200),
      );
      assert.doesNotMatch(svc.output(), /under pressure/);
    });

    it('answers the readiness check (/health/detailed) 200 once it serves requests', async () => {
      assert.ok(svc);
      const res = await fetch(`${svc.url}/health/detailed`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { status: string; checks: { database: { status: string } } };
      assert.equal(body.status, 'ok');
      assert.equal(body.checks.database.status, 'ok');
    });
  });
}
