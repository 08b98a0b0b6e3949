import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/platform/db/database.ts';

// A second process writing to the same SQLite file: a CLI command (create-admin, users unlock…)
// beside the running server. The second process here tries once without waiting, says whether it
// found the file locked, then writes with the usual busy timeout.
const SECOND_WRITER = `
import SQLite from 'better-sqlite3';
const handle = new SQLite(process.argv[1]);
handle.pragma('busy_timeout = 0');
const write = () => handle.prepare("insert into scratch (who) values ('other process')").run();
try {
  write();
  console.log('committed');
} catch (err) {
  if (err.code !== 'SQLITE_BUSY') throw err;
  console.log('blocked');
  handle.pragma('busy_timeout = 5000');
  write();
  console.log('committed');
}
`;

describe('SQLite transactions beside another process that writes', () => {
  let dir: string;
  let database: Database;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-second-writer-'));
    database = openDatabase(`sqlite:${join(dir, 'gatehouse.db')}`);
    await sql`create table scratch (who text not null)`.execute(database.db);
  });
  after(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('cli-beside-server-database-locked: a transaction that read first still writes when another process wrote meanwhile', async () => {
    const outcome = await database.db.transaction().execute(async (trx) => {
      await sql`select count(*) from scratch`.execute(trx);
      const other = spawn(
        process.execPath,
        ['--input-type=module', '-e', SECOND_WRITER, join(dir, 'gatehouse.db')],
        {
          cwd: process.cwd(),
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      const lines = createInterface({ input: other.stdout })[Symbol.asyncIterator]();
      // Deferred BEGIN: the other process commits at once, and this transaction's write below
      // would then fail with SQLITE_BUSY ("database is locked") without waiting.
      const first = (await lines.next()).value;
      await sql`insert into scratch (who) values ('this process')`.execute(trx);
      return { first, other, lines };
    });
    assert.equal(outcome.first, 'blocked', 'the other process waited for this transaction');
    assert.equal((await outcome.lines.next()).value, 'committed');
    const [code] = await once(outcome.other, 'exit');
    assert.equal(code, 0);
    const rows = await sql<{ who: string }>`select who from scratch order by rowid`.execute(database.db);
    assert.deepEqual(
      rows.rows.map((r) => r.who),
      ['this process', 'other process'],
    );
  });
});
