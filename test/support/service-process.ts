import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** A real Gatehouse process (`node src/main.ts`) listening on loopback. */
export interface ServiceProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** True while the process has not exited. */
  alive(): boolean;
  /** Everything it wrote to stdout and stderr so far (its JSON log lines). */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited within 10 s. Resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: no shutdown hook runs (crash tests). Resolves once the process is gone. */
  kill(): Promise<void>;
}

/** A port that was free a moment ago on 127.0.0.1. */
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

/**
 * Starts `node src/main.ts` with exactly `env` (plus PATH, PORT and HOST) in an empty working
 * directory (so no stray .env is read), and resolves once `GET /health` answers 200. Rejects with
 * the process's output if it exits first or does not come up within `startAttempts` × 100 ms.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  startAttempts = 300,
  /** A port chosen beforehand (e.g. to put it in PUBLIC_URL); a free one otherwise. */
  chosenPort?: number,
): Promise<ServiceProcess> {
  const port = chosenPort ?? (await freePort());
  const cwd = mkdtempSync(join(tmpdir(), 'gatehouse-proc-'));
  const child = spawn(process.execPath, [MAIN], {
    cwd,
    // Event-loop load shedding off unless a test asks for it (see test/helpers/app.ts testEnv).
    env: {
      PATH: process.env.PATH ?? '',
      PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.once('exit', () => rmSync(cwd, { recursive: true, force: true }));
  const url = `http://127.0.0.1:${port}`;
  const proc: ServiceProcess = {
    url,
    port,
    child,
    alive: () => child.exitCode === null && child.signalCode === null,
    output: () => out,
    async stop() {
      if (!proc.alive()) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (!proc.alive()) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  for (let i = 0; i < startAttempts; i++) {
    if (!proc.alive()) throw new Error(`gatehouse exited during start (code ${child.exitCode}):\n${out}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return proc;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await proc.stop();
  throw new Error(`gatehouse did not answer /health in time:\n${out}`);
}
