import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node src/cli.ts …` as a child process on a database; never rejects (the exit code is the result). */
export function runCli(
  args: string[],
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: ROOT,
        // A clean environment: only what the command needs, so a developer's variables cannot leak in.
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...env },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export interface EntryResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an entry point (`src/main.ts`, `src/cli.ts`) with exactly `env` (plus PATH) in `cwd`; resolves
 * when it exits. For the start-up paths, which must fail with one line before touching anything.
 */
export function runEntry(
  script: string,
  args: string[],
  env: Record<string, string>,
  cwd = ROOT,
): Promise<EntryResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, script), ...args], {
      cwd,
      // PORT 0 unless the test names one: the default 3000 may be taken by the README's own
      // `npm start` on this machine, and `serve` checks the port before anything the test is about.
      env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
