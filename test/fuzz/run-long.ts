// `npm run fuzz`: the fuzz property with many more runs per operation (FUZZ_RUNS, default 500).
import { spawnSync } from 'node:child_process';

const runs = process.env.FUZZ_RUNS ?? '500';
const result = spawnSync(process.execPath, ['--test', 'test/fuzz/fuzz.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, FUZZ_RUNS: runs },
});
process.exit(result.status ?? 1);
