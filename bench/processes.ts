// Process plumbing for the bench: CPU pinning, child processes, /proc readings, free ports.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';

/** CPUs the bench pins to: the server (and the baselines) on one, the load generator on the other. */
export const SERVER_CPU = 0;
export const LOAD_CPU = 1;

let tasksetOk: boolean | undefined;
let boostOk: boolean | undefined;

/**
 * True when bench processes can be given scheduling priority: Linux groups each session's
 * processes (autogroups) and shares the CPU between groups, so a plain `nice` does nothing against
 * other sessions. A bench child gets a session of its own and its group a nice of -20 (root or
 * CAP_SYS_NICE), which keeps the figures about Gatehouse rather than about the neighbours.
 */
export function canBoost(): boolean {
  if (boostOk === undefined) {
    try {
      const own = readFileSync('/proc/self/autogroup', 'utf8');
      boostOk =
        /nice/.test(own) &&
        execFileSync('nice', ['-n', '-20', 'nice'], { encoding: 'utf8' }).trim() === '-20';
    } catch {
      boostOk = false;
    }
  }
  return boostOk;
}

function boost(pid: number | undefined): void {
  if (pid === undefined || !canBoost()) return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, '-20');
  } catch {
    // Not permitted after all: the figures are just noisier.
  }
}

/** True when processes can be pinned (Linux `taskset` and at least two CPUs). */
export function canPin(): boolean {
  if (tasksetOk === undefined) {
    try {
      execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
      tasksetOk = availableParallelism() >= 2;
    } catch {
      tasksetOk = false;
    }
  }
  return tasksetOk;
}

const children = new Set<ChildProcess>();
// Detached children (own sessions) do not get the terminal's Ctrl-C: pass it on.
process.once('SIGINT', () => {
  for (const child of children) child.kill('SIGKILL');
  process.exit(130);
});

/** Spawns `node <args>` pinned to a CPU and boosted when possible (taskset execs, so the pid is node's). */
export function spawnNode(
  cpu: number,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stdout?: 'pipe' | 'ignore' | number; cwd?: string } = {},
): ChildProcess {
  const [cmd, ...rest] = canPin()
    ? ['taskset', '-c', String(cpu), process.execPath, ...args]
    : [process.execPath, ...args];
  const child = spawn(cmd as string, rest, {
    env: options.env ?? process.env,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdio: ['ignore', options.stdout ?? 'pipe', 'inherit'],
    // A session of its own puts the child in its own autogroup, which boost() can then raise.
    detached: canBoost(),
  });
  boost(child.pid);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Resolves with the first line of a child's stdout, parsed as JSON. */
export function firstJsonLine<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const newline = buffer.indexOf('\n');
      if (newline < 0) return;
      child.stdout?.off('data', onData);
      try {
        resolve(JSON.parse(buffer.slice(0, newline)) as T);
      } catch (err) {
        reject(err);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before printing its result`)));
  });
}

/** Runs `node <args>` pinned to a CPU to completion and parses its one JSON line. */
export async function runNodeJson<T>(cpu: number, args: string[], env?: NodeJS.ProcessEnv): Promise<T> {
  const child = spawnNode(cpu, args, env ? { env } : {});
  const result = await firstJsonLine<T>(child);
  if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  return result;
}

/** Sends SIGTERM and waits for the exit (SIGKILL after 5 s). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** A TCP port free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const CLOCK_TICKS = 100;

/** CPU seconds (user + system) a process has used so far; null where /proc is missing. */
export function cpuSeconds(pid: number): number | null {
  const path = `/proc/${pid}/stat`;
  if (!existsSync(path)) return null;
  // The command name (field 2) may hold spaces; fields after its closing parenthesis are fixed.
  const after = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(after[11]) + Number(after[12])) / CLOCK_TICKS;
}

/** A process's CPU seconds by kind of thread (bench/sizing.ts: where a login's or a grant's CPU goes). */
export interface ThreadCpu {
  /** The main thread: the event loop, every line of JavaScript and every SQLite statement. */
  loop: number;
  /** libuv's pool: argon2id hashing, WebCrypto (jose's RS256 ID tokens), file system calls. */
  pool: number;
  /** V8's helpers: concurrent and parallel garbage collection, background compilation. */
  v8: number;
  other: number;
}

/** CPU seconds so far per kind of thread, from `/proc/<pid>/task/<tid>/stat`; null where /proc is missing. */
export function threadCpuSeconds(pid: number): ThreadCpu | null {
  const dir = `/proc/${pid}/task`;
  if (!existsSync(dir)) return null;
  const sum: ThreadCpu = { loop: 0, pool: 0, v8: 0, other: 0 };
  for (const tid of readdirSync(dir)) {
    let stat: string;
    try {
      stat = readFileSync(`${dir}/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended since the listing
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(after[11]) + Number(after[12])) / CLOCK_TICKS;
    sum[tid === String(pid) ? 'loop' : threadKind(name)] += seconds;
  }
  return sum;
}

/** Node names its threads: `libuv-worker` (the pool), `V8Worker` and V8's other helpers. */
function threadKind(name: string): keyof ThreadCpu {
  if (name.startsWith('libuv-worker')) return 'pool';
  return name.startsWith('V8') ? 'v8' : 'other';
}

/** A `/proc/<pid>/status` field in MiB (VmHWM: peak resident set; VmRSS: current). */
export function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number | null {
  const path = `/proc/${pid}/status`;
  if (!existsSync(path)) return null;
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(path, 'utf8'));
  return m ? Number(m[1]) / 1024 : null;
}

/** Polls a URL until it answers 200; resolves with the milliseconds since `since`. */
export async function waitFor200(url: string, since: number, timeoutMs = 30_000): Promise<number> {
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - since;
    } catch {
      // Not listening yet.
    }
    if (performance.now() - since > timeoutMs)
      throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Holds processes to a share of one CPU with a cgroup CPU quota (see docs/benchmarks.md, "Server-bound"). */
export interface CpuCap {
  readonly share: number;
  hold(pid: number): void;
  release(pid: number): void;
  remove(): void;
}

// A short period keeps the throttled gaps short (a request waits at most period × (1 − share)).
const CAP_PERIOD_US = 5000;

/**
 * A CPU quota for the server under measurement, or null where no cgroup can be written (not
 * Linux, not root, no cpu controller). Tried as cgroup v1 (`/sys/fs/cgroup/cpu`), then v2.
 * Moving a process moves all its threads, the hashing pool included.
 */
export function cpuCap(share: number): CpuCap | null {
  const quota = String(Math.round(CAP_PERIOD_US * share));
  const name = `gatehouse-bench-${process.pid}`;
  const layouts = [
    {
      root: '/sys/fs/cgroup/cpu',
      setup: (dir: string) => {
        writeFileSync(`${dir}/cpu.cfs_period_us`, String(CAP_PERIOD_US));
        writeFileSync(`${dir}/cpu.cfs_quota_us`, quota);
      },
    },
    {
      root: '/sys/fs/cgroup',
      setup: (dir: string) => writeFileSync(`${dir}/cpu.max`, `${quota} ${CAP_PERIOD_US}`),
    },
  ];
  for (const { root, setup } of layouts) {
    const dir = `${root}/${name}`;
    try {
      if (!existsSync(root)) continue;
      if (!existsSync(dir)) mkdirSync(dir);
      setup(dir);
      return {
        share,
        hold: (pid) => writeFileSync(`${dir}/cgroup.procs`, String(pid)),
        release: (pid) => {
          try {
            writeFileSync(`${root}/cgroup.procs`, String(pid));
          } catch {
            // Already gone.
          }
        },
        remove: () => {
          try {
            rmdirSync(dir);
          } catch {
            // Still has a process (it exits soon) or already removed.
          }
        },
      };
    } catch {
      try {
        if (existsSync(dir)) rmdirSync(dir);
      } catch {
        // Nothing to clean.
      }
    }
  }
  return null;
}
