import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { type Database, openDatabase } from '../../src/platform/db/database.ts';
import { groupCommit, type Write } from '../../src/platform/db/group-commit.ts';
import type { DB } from '../../src/platform/db/schema.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

const insert =
  (v: string, seen?: boolean[]): Write<void> =>
  async (db) => {
    seen?.push(db.isTransaction);
    await sql`insert into t (v) values (${v})`.execute(db);
  };

// Writes of concurrent requests share one commit on SQLite (one fsync instead of one each), yet each
// is acknowledged only once committed, and one failing write fails nobody else's.
for (const dialect of DIALECTS) {
  describe(`group commit (${dialect})`, () => {
    let file: TestDatabase;
    let database: Database;
    let db: Kysely<DB>;
    before(async () => {
      file = await createTestDatabase(dialect);
      database = openDatabase(file.url);
      db = database.db;
      await sql`create table t (v text primary key)`.execute(db);
    });
    after(async () => {
      await database.close();
      await file.drop();
    });
    const values = async () =>
      (await sql<{ v: string }>`select v from t order by v`.execute(db)).rows.map((r) => r.v);

    it('writes issued together are committed together on SQLite, one by one on PostgreSQL', async () => {
      const write = groupCommit(db);
      const seen: boolean[] = [];
      await Promise.all(['a', 'b', 'c'].map((v) => write(insert(v, seen))));
      assert.deepEqual(seen, dialect === 'sqlite' ? [true, true, true] : [false, false, false]);
      assert.deepEqual(await values(), ['a', 'b', 'c']);
      const alone: boolean[] = [];
      await write(insert('d', alone));
      assert.deepEqual(alone, [false], 'a write alone runs without a transaction');
    });

    it("inside a caller's transaction, writes run in it as they come", async () => {
      await db.transaction().execute(async (trx) => {
        const seen: boolean[] = [];
        await Promise.all(['k', 'l'].map((v) => groupCommit(trx)(insert(v, seen))));
        assert.deepEqual(seen, [true, true]);
      });
      assert.ok((await values()).includes('l'));
    });

    it("each caller gets its own write's result, and one committer serves a database", async () => {
      assert.equal(groupCommit(db), groupCommit(db));
      const counts = await Promise.all(
        ['i', 'j'].map((v) =>
          groupCommit(db)(async (db) => {
            await insert(v)(db);
            return (await sql<{ n: number }>`select count(*) as n from t where v = ${v}`.execute(db)).rows[0]
              ?.n;
          }),
        ),
      );
      assert.deepEqual(counts.map(Number), [1, 1]);
    });

    // SQLite only: PostgreSQL's writes run as they come (each its own autocommit).
    if (dialect === 'sqlite')
      it('a write resolves only after its commit: another connection sees it at once', async () => {
        const write = groupCommit(db);
        const other = new SQLite(file.url.slice('sqlite:'.length), { readonly: true });
        try {
          await Promise.all(['e', 'f'].map((v) => write(insert(v))));
          const rows = other.prepare("select v from t where v in ('e', 'f') order by v").all();
          assert.deepEqual(rows, [{ v: 'e' }, { v: 'f' }]);
        } finally {
          other.close();
        }
      });

    it('one failing write fails only its caller; the others of its batch land', async () => {
      const write = groupCommit(db);
      const results = await Promise.allSettled(['g', 'a', 'h'].map((v) => write(insert(v))));
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
        '"a" exists already',
      );
      const landed = await values();
      assert.ok(landed.includes('g') && landed.includes('h'));
      assert.equal(landed.filter((v) => v === 'a').length, 1);
    });
  });
}
