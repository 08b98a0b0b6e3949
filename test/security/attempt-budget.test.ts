import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { release, reserveAttempt } from '../../src/identity/budgets/attempt-budget.ts';
import { deleteCountersByPrefix, readCounter } from '../../src/identity/budgets/throttle.queries.ts';
import { type Database, migrateToLatest, openDatabase } from '../../src/platform/db/database.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

// The check-then-act hole (every check of a secret reserves its attempt before the work): a budget read before the expensive check and counted after
// it lets N parallel attempts all through. reserveAttempt counts before the check, in one write.
for (const dialect of DIALECTS) {
  describe(`reserveAttempt (${dialect})`, () => {
    let file: TestDatabase;
    let first: Database;
    let second: Database;
    before(async () => {
      file = await createTestDatabase(dialect);
      first = openDatabase(file.url);
      await migrateToLatest(first.db);
      // A second connection pool on the same database stands for a second instance.
      second = openDatabase(file.url);
    });
    after(async () => {
      await second.close();
      await first.close();
      await file.drop();
    });

    it('parallel-reservations-exceed-budget: 100 concurrent attempts from two pools reserve exactly the budget', async () => {
      const budget = { key: 'test:parallel', limit: 5, windowMs: 60_000 };
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => reserveAttempt((i % 2 ? second : first).db, [budget])),
      );
      assert.equal(results.filter((r) => r.ok).length, 5);
      for (const r of results) if (!r.ok) assert.ok(r.retryAfterMs > 0 && r.retryAfterMs <= 60_000);
      assert.equal((await readCounter(first.db, budget.key))?.count, 5);
    });

    it('a refused attempt counts against none of its budgets', async () => {
      const spent = { key: 'test:spent', limit: 1, windowMs: 60_000 };
      const roomy = { key: 'test:roomy', limit: 10, windowMs: 60_000 };
      assert.ok((await reserveAttempt(first.db, [spent])).ok);
      const refused = await reserveAttempt(first.db, [roomy, spent]);
      assert.equal(refused.ok, false);
      assert.equal(Number((await readCounter(first.db, roomy.key))?.count ?? 0), 0);
    });

    it('release gives an attempt back; a window that ran out starts afresh', async () => {
      const budget = { key: 'test:release', limit: 2, windowMs: 60_000 };
      const now = Date.now();
      const a = await reserveAttempt(first.db, [budget], now);
      const b = await reserveAttempt(first.db, [budget], now);
      assert.ok(a.ok && b.ok);
      assert.equal((await reserveAttempt(first.db, [budget], now)).ok, false);
      await release(first.db, a.reservation);
      assert.ok((await reserveAttempt(first.db, [budget], now)).ok);
      // After the window, the budget is whole again.
      const later = await reserveAttempt(first.db, [budget], now + 60_000);
      assert.ok(later.ok);
      assert.equal((await readCounter(first.db, budget.key))?.count, 1);
    });

    it('deleteCountersByPrefix removes only keys under the prefix, treating % and _ literally', async () => {
      await reserveAttempt(first.db, [{ key: 'p:a_b%:1', limit: 5, windowMs: 60_000 }]);
      await reserveAttempt(first.db, [{ key: 'p:a_b%:2', limit: 5, windowMs: 60_000 }]);
      await reserveAttempt(first.db, [{ key: 'p:axb:1', limit: 5, windowMs: 60_000 }]);
      assert.equal(await deleteCountersByPrefix(first.db, 'p:a_b%:'), 2);
      assert.ok(await readCounter(first.db, 'p:axb:1'));
    });
  });
}
