import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Database, migrateToLatest, openDatabase } from '../../src/db/database.ts';
import { preparedQuery } from '../../src/db/prepared-query.ts';
import type { SessionRow } from '../../src/db/schema.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

// The login's statements are compiled once and then bound per call (src/db/prepared-query.ts): each
// call must get its own values, on both engines, and a builder the SQL cannot be fixed for must be
// refused rather than run with the first call's values.
for (const dialect of DIALECTS) {
  describe(`preparedQuery (${dialect})`, () => {
    let file: TestDatabase;
    let database: Database;
    before(async () => {
      file = await createTestDatabase(dialect);
      database = openDatabase(file.url);
      await migrateToLatest(database.db);
    });
    after(async () => {
      await database.close();
      await file.drop();
    });

    const counterByKey = preparedQuery((db, p: { key: string }) =>
      db.selectFrom('throttle_counters').select(['key', 'count']).where('key', '=', p.key),
    );
    const counterInsert = preparedQuery((db, p: { key: string; count: number; startedAt: number }) =>
      db
        .insertInto('throttle_counters')
        .values({ key: p.key, count: p.count, window_started_at: p.startedAt }),
    );

    it('binds each call its own values, inside and outside a transaction', async () => {
      await counterInsert(database.db, { key: 'a', count: 1, startedAt: 10 });
      await database.db.transaction().execute(async (trx) => {
        await counterInsert(trx, { key: 'b', count: 2, startedAt: 20 });
        assert.deepEqual((await counterByKey(trx, { key: 'b' })).rows, [{ key: 'b', count: 2 }]);
      });
      assert.deepEqual((await counterByKey(database.db, { key: 'a' })).rows, [{ key: 'a', count: 1 }]);
      assert.deepEqual((await counterByKey(database.db, { key: 'b' })).rows, [{ key: 'b', count: 2 }]);
      assert.deepEqual((await counterByKey(database.db, { key: 'c' })).rows, []);
    });

    it('compiles without running: the SQL and the values bound in order', async () => {
      const query = counterInsert.compile(database.db, { key: 'z', count: 3, startedAt: 30 });
      assert.match(query.sql, /insert into "throttle_counters"/);
      assert.deepEqual(query.parameters, ['z', 3, 30]);
      assert.deepEqual((await counterByKey(database.db, { key: 'z' })).rows, []);
    });

    it("keeps the query's own constants", async () => {
      const freshCounter = preparedQuery((db, p: { key: string }) =>
        db.insertInto('throttle_counters').values({ key: p.key, count: 7, window_started_at: 0 }),
      );
      await freshCounter(database.db, { key: 'k1' });
      await freshCounter(database.db, { key: 'k2' });
      const rows = await database.db
        .selectFrom('throttle_counters')
        .select(['key', 'count', 'window_started_at'])
        .where('key', 'in', ['k1', 'k2'])
        .orderBy('key')
        .execute();
      assert.deepEqual(
        rows.map((r) => ({ ...r, window_started_at: Number(r.window_started_at) })),
        [
          { key: 'k1', count: 7, window_started_at: 0 },
          { key: 'k2', count: 7, window_started_at: 0 },
        ],
      );
    });

    it('binds whole rows, nulls included', async () => {
      const sessionInsert = preparedQuery((db, row: SessionRow) => db.insertInto('sessions').values(row));
      const now = Date.now();
      await database.db
        .insertInto('users')
        .values({
          id: 'u1',
          email: 'prepared@example.test',
          name: 'Prepared',
          role: 'user',
          status: 'active',
          password_hash: null,
          email_verified: 0,
          created_at: now,
          updated_at: now,
          last_login_at: null,
        })
        .execute();
      for (const id of ['s1', 's2'])
        await sessionInsert(database.db, {
          id,
          user_id: 'u1',
          created_at: now,
          last_used_at: now,
          expires_at: now + 1000,
          revoked_at: null,
          revoked_reason: null,
          user_agent: id === 's1' ? 'first' : null,
          amr: null,
          auth_time: null,
          ip: '127.0.0.1',
        });
      const rows = await database.db
        .selectFrom('sessions')
        .select(['id', 'user_agent', 'revoked_at'])
        .orderBy('id')
        .execute();
      assert.deepEqual(rows, [
        { id: 's1', user_agent: 'first', revoked_at: null },
        { id: 's2', user_agent: null, revoked_at: null },
      ]);
    });

    it('refuses a call whose fields differ from the first call, and undefined values', async () => {
      await assert.rejects(
        async () => counterByKey(database.db, { key: 'a', extra: 1 } as never),
        /other fields than it was built for/,
      );
      await assert.rejects(
        async () => counterByKey(database.db, { key: undefined } as never),
        /field key is undefined/,
      );
    });

    it('refuses builders whose SQL would depend on the values', async () => {
      const transformed = preparedQuery((db, p: { key: string }) =>
        db.selectFrom('throttle_counters').selectAll().where('key', '=', `${p.key}:suffix`),
      );
      await assert.rejects(
        async () => transformed(database.db, { key: 'a' }),
        /transformed inside the builder/,
      );
      const unused = preparedQuery((db, _p: { key: string; other: string }) =>
        db.selectFrom('throttle_counters').selectAll(),
      );
      await assert.rejects(
        async () => unused(database.db, { key: 'a', other: 'b' }),
        /unused field\(s\) key, other/,
      );
    });
  });
}
