import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli, runEntry } from '../helpers/cli.ts';
import { freePort, type ServiceProcess, startServiceProcess } from '../support/service-process.ts';

const ADMIN = { ADMIN_EMAIL: 'root@lock.test', ADMIN_PASSWORD: 'correct horse battery staple 42' };

async function login(svc: ServiceProcess): Promise<number> {
  const res = await fetch(`${svc.url}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ADMIN.ADMIN_EMAIL, password: ADMIN.ADMIN_PASSWORD }),
  });
  await res.arrayBuffer();
  return res.status;
}

// docs/deployment.md, "SQLite: one serving process per file": `serve` holds an OS-level lock on
// `<database>.lock` (src/platform/db/serve-lock.ts); the CLI commands do not take it.
describe('one serving process per SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-lock-'));
  const url = `sqlite:${join(dir, 'gatehouse.db')}`;
  const env = { DATABASE_URL: url, LOG_LEVEL: 'info', ...ADMIN };
  const running: ServiceProcess[] = [];
  after(async () => {
    for (const svc of running) await svc.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('regression: a second serve on the same SQLite file started (and refused every token of the first); now it exits with one line', async () => {
    const first = await startServiceProcess(env);
    running.push(first);
    // The start names the address that works (PUBLIC_URL), once, with the console.
    const ready = first
      .output()
      .split('\n')
      .filter((l) => l.includes('Gatehouse is ready at'));
    assert.equal(ready.length, 1, first.output());
    const origin = `http://localhost:${first.port}`;
    assert.equal(
      JSON.parse(ready[0] ?? '{}').msg,
      `Gatehouse is ready at ${origin} (console: ${origin}/admin), listening on 127.0.0.1:${first.port}`,
    );

    const second = await runEntry(
      'src/main.ts',
      [],
      { ...env, PORT: String(await freePort()), PUBLIC_URL: origin },
      dir,
    );
    assert.equal(second.code, 1);
    const lines = second.stderr.trim().split('\n');
    assert.equal(lines.length, 1, second.stderr);
    assert.equal(
      lines[0],
      `gatehouse: the database ${join(dir, 'gatehouse.db')} is already served by another Gatehouse (process ${first.child.pid}): run one serving process per SQLite file (stop that one first, or use PostgreSQL for several instances)`,
    );
    assert.equal(second.stdout, '', 'nothing was opened or logged');

    // The first keeps serving, and the CLI still works beside it.
    assert.equal(first.alive(), true);
    assert.equal(await login(first), 200);
    const migrate = await runCli(['migrate'], url);
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.equal(await login(first), 200);

    // After a stop, a new start works.
    assert.equal(await first.stop(), 0);
    const third = await startServiceProcess(env);
    running.push(third);
    assert.equal(await login(third), 200);

    // A process killed with SIGKILL leaves no stale lock: the operating system ends it with the process.
    await third.kill();
    const fourth = await startServiceProcess(env);
    running.push(fourth);
    assert.equal(await login(fourth), 200);
    assert.equal(await fourth.stop(), 0);
  });
});
