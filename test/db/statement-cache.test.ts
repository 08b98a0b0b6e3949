import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/platform/db/database.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

// SQLite statements are prepared once per SQL text and reused (bench hot spot); reuse must never
// return stale rows or trip over a statement a stream left behind.
describe('SQLite prepared-statement reuse', () => {
  let file: TestDatabase;
  let database: Database;
  before(async () => {
    file = await createTestDatabase('sqlite');
    database = openDatabase(file.url);
    await sql`create table t (id integer primary key, v text not null)`.execute(database.db);
    for (const v of ['a', 'b', 'c'])
      await database.db
        .insertInto('t' as never)
        .values({ v } as never)
        .execute();
  });
  after(async () => {
    await database.close();
    await file.drop();
  });

  const select = () =>
    database.db
      .selectFrom('t' as never)
      .select(['v' as never])
      .orderBy('id' as never);

  it('sees writes made between two runs of the same statement', async () => {
    assert.equal((await select().execute()).length, 3);
    await database.db
      .insertInto('t' as never)
      .values({ v: 'd' } as never)
      .execute();
    assert.deepEqual(
      (await select().execute()).map((r) => (r as { v: string }).v),
      ['a', 'b', 'c', 'd'],
    );
  });

  it('runs a statement again after a stream of it was abandoned midway', async () => {
    for await (const row of select().stream()) {
      assert.equal((row as { v: string }).v, 'a');
      break;
    }
    assert.equal((await select().execute()).length, 4);
  });
});
