import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('npm test (scripts/test.mjs)', () => {
  it('regression: npm test ran silently for 25 minutes; now it says how many files and about how long, then how long it took', () => {
    // One quick file, run as `npm test -- <file>` runs it: the same script, the same first and last lines.
    const run = spawnSync(process.execPath, ['scripts/test.mjs', 'test/app/node-version.test.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^npm test: 1 file on SQLite, about \d+ (s|min) on 2 cores$/);
    assert.match(lines.at(-1) ?? '', /^npm test: 1 file in \d+ (s|min)$/);
  });
});
