// Process plumbing for the bench: CPU pinning, child processes, /proc readings, free ports.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';

/** CPUs the bench pins to: the server (and the baselines) on one, the load generator on the other. */
export const SERVER_CPU = 0;
export const LOAD_CPU = 1;

let tasksetOk: boolean | undefined;

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

/** Spawns `node <args>` pinned to a CPU when possible (taskset execs, so the pid is node's). */
export function spawnNode(
  cpu: number,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stdout?: 'pipe' | 'ignore' | number } = {},
): ChildProcess {
  const [cmd, ...rest] = canPin()
    ? ['taskset', '-c', String(cpu), process.execPath, ...args]
    : [process.execPath, ...args];
  return spawn(cmd as string, rest, {
    env: options.env ?? process.env,
    stdio: ['ignore', options.stdout ?? 'pipe', 'inherit'],
  });
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
