import { access, readdir, readFile } from 'node:fs/promises';
import { setPriority } from 'node:os';

/**
 * Lowers the scheduling priority of libuv's pool threads (Linux), where password hashing runs.
 * When the service has fewer CPUs than busy threads, four argon2 runs at equal priority left the
 * event loop a fifth of a CPU and /health waited up to 17 ms behind them during a login storm;
 * at nice 10 the loop preempts them at once and hashing still gets all the CPU the loop leaves
 * (docs/benchmarks.md). Returns how many threads were changed.
 */
export async function lowerWorkerPriority(nice: number): Promise<number> {
  if (process.platform !== 'linux' || nice <= 0) return 0;
  // libuv starts every pool thread on the first job; this is one.
  await access(process.cwd());
  let changed = 0;
  for (const tid of await readdir('/proc/self/task')) {
    const name = await readFile(`/proc/self/task/${tid}/comm`, 'utf8').catch(() => '');
    if (name.trim() !== 'libuv-worker') continue;
    // On Linux, setpriority on a thread id changes that thread only.
    setPriority(Number(tid), nice);
    changed++;
  }
  return changed;
}
