// `npm test` runs the whole suite; `npm test -- test/auth/login.test.ts …` runs only those files.
// Options pass through to `node --test` (write them as --name=value).
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const files = args.filter((arg) => !arg.startsWith('-'));
const run = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', ...args, ...(files.length > 0 ? [] : ['test/**/*.test.ts'])],
  { stdio: 'inherit' },
);
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
