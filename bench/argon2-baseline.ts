// The login baseline: raw @node-rs/argon2 verify throughput at Gatehouse's parameters, with a given
// number of verifications in flight, in a process pinned like the service (bench/run.ts pins it).
import { createHistogram } from 'node:perf_hooks';
import { type Algorithm, hash, verify } from '@node-rs/argon2';
import {
  ARGON2_MEMORY_COST_KIB,
  ARGON2_PARALLELISM,
  ARGON2_TIME_COST,
} from '../src/identity/passwords/passwords.ts';

const [concurrency = 16, durationS = 5, warmupS = 1] = process.argv.slice(2).map(Number);
const options = {
  algorithm: 2 as Algorithm, // argon2id
  memoryCost: ARGON2_MEMORY_COST_KIB,
  timeCost: ARGON2_TIME_COST,
  parallelism: ARGON2_PARALLELISM,
};
const password = 'correct horse battery staple 42';
const stored = await hash(password, options);

let measuring = false;
let stop = false;
let done = 0;
const latencyUs = createHistogram();

async function worker(): Promise<void> {
  while (!stop) {
    const start = process.hrtime.bigint();
    const ok = await verify(stored, password);
    if (!ok) throw new Error('argon2 verify failed');
    if (measuring) {
      done++;
      latencyUs.record(Math.max(1, Number((process.hrtime.bigint() - start) / 1000n)));
    }
  }
}

const workers = Array.from({ length: concurrency }, worker);
await new Promise((r) => setTimeout(r, warmupS * 1000));
measuring = true;
const t0 = process.hrtime.bigint();
await new Promise((r) => setTimeout(r, durationS * 1000));
measuring = false;
const elapsedS = Number(process.hrtime.bigint() - t0) / 1e9;
stop = true;
await Promise.all(workers);
process.stdout.write(
  `${JSON.stringify({
    concurrency,
    durationS: elapsedS,
    rps: done / elapsedS,
    p50Ms: latencyUs.percentile(50) / 1000,
    p99Ms: latencyUs.percentile(99) / 1000,
    threadpool: Number(process.env.UV_THREADPOOL_SIZE) || 4,
  })}\n`,
);
