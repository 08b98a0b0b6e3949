import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// The hashing threads run at a lower priority than the event loop (bench: /health p99 during a
// login storm). Checked in a child process so the test runner's own threads are left alone.
const MODULE = fileURLToPath(new URL('../../src/platform/worker-priority.ts', import.meta.url));
const SCRIPT = `
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
const { lowerWorkerPriority } = await import(${JSON.stringify(MODULE)});
const changed = await lowerWorkerPriority(Number(process.argv[1]));
const workers = readdirSync('/proc/self/task')
  .filter((tid) => readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim() === 'libuv-worker')
  .map((tid) => getPriority(Number(tid)));
console.log(JSON.stringify({ changed, workers, main: getPriority(process.pid) }));
`;

function run(nice: number): { changed: number; workers: number[]; main: number } {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', SCRIPT, String(nice)], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '3' },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

describe('worker priority', {
  skip: process.platform !== 'linux' && 'libuv thread priority is Linux-only',
}, () => {
  it('lowers every libuv pool thread and not the event loop', () => {
    const result = run(7);
    assert.equal(result.changed, 3);
    assert.deepEqual(result.workers, [7, 7, 7]);
    assert.equal(result.main, 0);
  });

  it('leaves them alone at 0', () => {
    const result = run(0);
    assert.equal(result.changed, 0);
    assert.ok(result.workers.every((n) => n === 0));
  });
});
