import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runEntry } from '../helpers/cli.ts';

const UNREACHABLE = 'postgres://gatehouse:hunter2-secret@127.0.0.1:1/gatehouse';

describe('start failures are named before anything is changed (issue 20, item 7)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-start-'));
  let taken: Server;
  let port = 0;
  before(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  after(async () => {
    await new Promise((resolve) => taken.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('regression: a port clash was reported only after a fresh database was migrated and an admin password printed', async () => {
    const file = join(dir, 'fresh.db');
    const result = await runEntry(
      'src/main.ts',
      [],
      { PORT: String(port), DATABASE_URL: `sqlite:${file}` },
      dir,
    );
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr.trim(),
      `gatehouse: port ${port} on 127.0.0.1 is already in use (EADDRINUSE: another Gatehouse?); set PORT to a free port`,
    );
    assert.equal(result.stdout, '', 'no log line: no migration, no generated password');
    assert.equal(existsSync(file), false, 'the database was not even created');
  });

  for (const [label, script, args] of [
    ['serve', 'src/main.ts', []],
    ['migrate', 'src/cli.ts', ['migrate']],
    ['rotate-keys', 'src/cli.ts', ['rotate-keys']],
  ] as const) {
    it(`regression: ${label} on an unreachable PostgreSQL said "migration unknown failed"`, async () => {
      const result = await runEntry(
        script,
        [...args],
        { DATABASE_URL: UNREACHABLE, PUBLIC_URL: 'http://localhost:3000', PORT: '0', LOG_LEVEL: 'silent' },
        dir,
      );
      assert.equal(result.code, 1);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(
        lines[0] ?? '',
        /^gatehouse: .*cannot reach the database postgres:\/\/gatehouse:\*\*\*@127\.0\.0\.1:1\/gatehouse: .*ECONNREFUSED/,
      );
      assert.doesNotMatch(result.stderr, /migration/);
      assert.doesNotMatch(result.stderr, /hunter2-secret/);
    });
  }
});
