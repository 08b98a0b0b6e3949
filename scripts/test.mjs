// `npm test` runs the whole suite; `npm test -- test/auth/login.test.ts …` runs only those files.
// Options pass through to `node --test` (write them as --name=value). It says first how many files
// will run and roughly how long that takes, and last how long it took.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

// The whole suite on SQLite took about 25 minutes on a 2-core machine (2026-12): ~7 s a file on
// average, two files at a time. An estimate for the person waiting, never a limit.
const SECONDS_PER_FILE = 7;

const args = process.argv.slice(2);
const named = args.filter((arg) => !arg.startsWith('-'));
// fs.globSync arrived in Node 22; on an older Node the count is left out rather than failing.
const files = named.length > 0 ? named : (fs.globSync?.('test/**/*.test.ts') ?? []);
const postgres = process.env.TEST_DATABASE_URL ? ' and PostgreSQL' : '';

/** "40 s", "12 min": a figure for a person, not a measurement to compare. */
function roughly(seconds, round = Math.round) {
  if (seconds < 90) return `${Math.max(1, round(seconds))} s`;
  return `${Math.round(seconds / 60)} min`;
}

const estimate = (files.length * SECONDS_PER_FILE) / 2;
console.log(
  `npm test: ${files.length} file${files.length === 1 ? '' : 's'} on SQLite${postgres}, about ${roughly(estimate, (x) => Math.ceil(x / 10) * 10)} on 2 cores` +
    (named.length > 0 ? '' : ' (run a few: npm test -- test/auth/login.test.ts)'),
);
const started = performance.now();
const run = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', ...args, ...(named.length > 0 ? [] : ['test/**/*.test.ts'])],
  { stdio: 'inherit' },
);
console.log(
  `npm test: ${files.length} file${files.length === 1 ? '' : 's'} in ${roughly((performance.now() - started) / 1000)}`,
);
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
