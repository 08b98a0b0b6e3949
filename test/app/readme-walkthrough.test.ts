import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { startServiceProcess } from '../support/service-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The sh blocks of the README between its walkthrough markers, as the reader copies them: the
 * test runs the README itself, so the two cannot drift apart.
 */
function walkthroughBlocks(readme: string): string[] {
  const begin = readme.indexOf('<!-- walkthrough:begin');
  const end = readme.indexOf('<!-- walkthrough:end -->');
  assert.ok(begin >= 0 && end > begin, 'the README marks its walk-through');
  const section = readme.slice(begin, end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
}

/** Runs the walk-through with bash in `cwd`, the README's port swapped for the service's. */
function runWalkthrough(script: string, cwd: string, port: number, databaseUrl: string) {
  const text = `set -euo pipefail\n${script.replaceAll('http://localhost:3000', `http://127.0.0.1:${port}`)}`;
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'bash',
      ['-c', text],
      {
        cwd,
        // What a reader's shell has: node and npm on PATH, a home; the database is the service's.
        env: {
          PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
          HOME: process.env.HOME ?? cwd,
          DATABASE_URL: databaseUrl,
          // Required with PostgreSQL (one issuer for every instance); the README's own address.
          PUBLIC_URL: 'http://localhost:3000',
        },
        timeout: 120_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** A working directory like a clone (package.json, src/, scripts/, node_modules/), without its files. */
function cloneLike(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-readme-'));
  for (const entry of ['package.json', 'src', 'scripts', 'node_modules']) {
    symlinkSync(join(ROOT, entry), join(dir, entry));
  }
  return dir;
}

const script = walkthroughBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8')).join('\n');

for (const dialect of DIALECTS) {
  describe(`README walk-through, on a service started twice on one database [${dialect}]`, () => {
    let database: TestDatabase;
    let cwd: string;
    before(async () => {
      database = await createTestDatabase(dialect);
      cwd = cloneLike();
    });
    after(async () => {
      rmSync(cwd, { recursive: true, force: true });
      await database.drop();
    });

    it('has the blocks: create-admin, login, verify, refresh, logout', () => {
      for (const step of ['create-admin', '/api/v1/login', 'verify-token', 'refresh-token', 'logout']) {
        assert.ok(script.includes(step), step);
      }
      assert.doesNotMatch(
        script,
        /generated_password/,
        'the walk-through does not need the one-time password',
      );
    });

    // Regression: the walk-through read the one-time password from the log of `npm start`, which
    // only the very first start prints; on a second start $PASSWORD was empty and login got a 400.
    for (const start of ['first', 'second']) {
      it(`works top to bottom after the ${start} start`, async () => {
        const service = await startServiceProcess({
          DATABASE_URL: database.url,
          PUBLIC_URL: 'http://localhost:3000',
          LOG_LEVEL: 'info',
        });
        try {
          const printed = service.output().includes('generated_password');
          assert.equal(printed, start === 'first', 'only the first start prints a one-time password');
          const run = await runWalkthrough(script, cwd, service.port, database.url);
          assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
          const out = run.stdout;
          assert.match(out, /admin admin@example\.com ready \(id [0-9a-f-]{36}\)/);
          const valid = out.indexOf('"valid":true');
          const loggedOut = out.indexOf('HTTP/1.1 204 No Content');
          const revoked = out.indexOf('"code":"session_revoked"');
          assert.ok(valid >= 0 && loggedOut > valid && revoked > loggedOut, out);
          assert.ok(service.alive());
        } finally {
          await service.stop();
        }
      });
    }
  });
}
