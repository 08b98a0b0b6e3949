import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { v7 as uuidv7 } from 'uuid';
import {
  SEARCH_SWITCHES,
  SEARCH_TOTAL_CAP,
  SEARCH_TUNING,
} from '../../src/modules/users/search/users-search.service.ts';
import { NAME_WORDS } from '../../src/modules/users/search/users-search-pg.queries.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { migrations } from '../../src/platform/db/migrations/index.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { authHeaders } from '../helpers/users.ts';
import { allUsers, byteCompare, everyPage, insertUsers } from './fixtures.ts';

/*
 * Migration 20261126150000_users_name_words: PostgreSQL reads a sparse search tier 1 from
 * user_name_words (one row per word start of each lower-cased name), kept by triggers, and stops a
 * count when that table alone shows the cap (docs/users.md, Search). Holes it could open: a user
 * who existed before the upgrade missing (backfill); a renamed, re-addressed, re-roled or deleted
 * user's old words still answering; a word after a hyphen, or a query spanning one, missed; a user
 * with two matching words listed twice, or taking two places on a page; the exact e-mail (tier 0) repeated in tier 1; pages or
 * totals that differ from the general plans'. On SQLite the migration does nothing, and must
 * apply and revert cleanly.
 */

const BEFORE = '20261126090000_users_search_probes';
const NAME = '20261126150000_users_name_words';

type Page = { data: Array<{ email: string }>; next_cursor: string | null; total: number };

function migratorOf(db: ReturnType<typeof openDatabase>['db']): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
  });
}

/** The documented tiers (docs/users.md): exact email, email or name-word prefix, any substring. */
function reference(users: UserRow[], q: string, keep: (u: UserRow) => boolean): string[] {
  const qf = q.toLowerCase();
  const tier = (u: UserRow): number => {
    const name = u.name.toLowerCase();
    if (u.email === qf) return 0;
    if (u.email.startsWith(qf) || name.startsWith(qf) || name.includes(` ${qf}`) || name.includes(`-${qf}`)) {
      return 1;
    }
    return u.email.includes(qf) || name.includes(qf) ? 2 : 3;
  };
  return users
    .filter(keep)
    .map((u) => ({ u, tier: tier(u) }))
    .filter((x) => x.tier < 3)
    .sort((a, b) => a.tier - b.tier || byteCompare(a.u.email, b.u.email))
    .map((x) => x.u.email);
}

for (const dialect of DIALECTS) {
  describe(`users search by name words [${dialect}]`, () => {
    let fresh: TestDatabase;
    let t: TestApp;
    let headers: { authorization: string };
    const renamed = uuidv7();
    const readdressed = uuidv7();
    const deleted = uuidv7();
    const moved = uuidv7();
    const both = uuidv7();

    before(async () => {
      fresh = await createTestDatabase(dialect);
      const old = openDatabase(fresh.url);
      try {
        assert.equal((await migratorOf(old.db).migrateTo(BEFORE)).error, undefined);
        const now = Date.now();
        const user = (id: string, email: string, name: string, role = 'user') =>
          sql`insert into users (id, email, name, role, status, password_hash, email_verified, created_at, updated_at, last_login_at)
            values (${id}, ${email}, ${name}, ${role}, 'active', null, 0, ${now}, ${now}, null)`.execute(
            old.db,
          );
        await user(uuidv7(), 'aa.before@example.com', 'Mary-Jane Before');
        await user(renamed, 'ab.renamed@example.com', 'Mary-Jane Renamed');
        await user(readdressed, 'ac.old-address@example.com', 'Zed Mary-Janet', 'admin');
        await user(deleted, 'ad.deleted@example.com', 'Mary-Jane Deleted');
        await user(moved, 'ae.moving@example.com', 'Mary-Jane Moving');
        await user(both, 'af.both@example.com', 'Jane Both');
        await user(uuidv7(), 'zx.admin@example.com', 'Admin Mary-Jane', 'admin');
      } finally {
        await old.close();
      }
      // The service migrates at start: the users above are backfilled.
      t = await buildTestApp(dialect, { database: fresh });
      const admin = t.ctx.db.selectFrom('users').selectAll().where('email', '=', 'zx.admin@example.com');
      headers = await authHeaders(t, await admin.executeTakeFirstOrThrow());
      await insertUsers(t, [
        { email: 'mary-jane@example.com', name: 'Exact' },
        { email: 'mary-jane.b@example.com', name: 'By Email' },
        { email: 'zz.twice@example.com', name: 'Mary-Jane Mary-Janet' },
        { email: 'ba.hyphen@example.com', name: 'Anne-Mary-Jane Roe' },
        { email: 'bb.mid@example.com', name: 'Rosemary-Jane Poe', status: 'disabled' },
        { email: 'bc.space@example.com', name: 'Lee  Mary-Jan' },
        { email: 'bd.upper@example.com', name: 'MARY-JANE UPPER', role: 'admin' },
        { email: 'be.other@example.com', name: 'Jane Mary' },
        { email: 'bf.invited@example.com', name: 'Mary-Jane Invited', status: 'invited' },
        // Two matching words early in email order, before more tier-1 users: one place on a page.
        { email: 'ca.twice@example.com', name: 'Qox Qoxy' },
        { email: 'cb.once@example.com', name: 'Qoxane Roe' },
        { email: 'cc.once@example.com', name: 'Ann Qox' },
        ...Array.from({ length: 30 }, (_, i) => ({ email: `pad${String(i).padStart(2, '0')}@example.com` })),
      ]);
      const db = t.ctx.db;
      await db.updateTable('users').set({ name: 'Someone Else' }).where('id', '=', renamed).execute();
      await db
        .updateTable('users')
        .set({ email: 'zy.new-address@example.com', role: 'user' })
        .where('id', '=', readdressed)
        .execute();
      await db.updateTable('users').set({ email: 'ze.moved@example.com' }).where('id', '=', moved).execute();
      await db
        .updateTable('users')
        .set({ email: 'zf.both@example.com', name: 'Mary-Jane Both' })
        .where('id', '=', both)
        .execute();
      await db.deleteFrom('users').where('id', '=', deleted).execute();
    });
    after(async () => {
      Object.assign(SEARCH_TUNING, defaults);
      SEARCH_SWITCHES.nameWords = true;
      NAME_WORDS.max = 20_000;
      await t.destroy();
    });
    const defaults = { ...SEARCH_TUNING };

    const all = (params: Record<string, string>) =>
      everyPage(t, headers, `/api/v1/users/search?${new URLSearchParams(params)}`);

    // PostgreSQL only: SQLite has no such table (its FTS5 index holds the word starts).
    if (dialect === 'postgres')
      it('keeps one row per word start of the lower-cased name, in step with every change', async () => {
        const words = async (email: string) =>
          (
            await sql<{ word: string; email: string; role: string }>`select word, email, role
            from user_name_words where email = ${email} order by word`.execute(t.ctx.db)
          ).rows;
        assert.deepEqual(
          (await words('zz.twice@example.com')).map((r) => r.word),
          ['jane mary-janet', 'janet', 'mary-jane mary-janet', 'mary-janet'],
        );
        assert.deepEqual(
          (await words('bc.space@example.com')).map((r) => r.word),
          [' mary-jan', 'jan', 'lee  mary-jan', 'mary-jan'],
        );
        assert.deepEqual(
          (await words('ab.renamed@example.com')).map((r) => r.word),
          ['else', 'someone else'],
        );
        const moved = await words('zy.new-address@example.com');
        assert.deepEqual(
          moved.map((r) => [r.word, r.email, r.role]),
          [
            ['janet', 'zy.new-address@example.com', 'user'],
            ['mary-janet', 'zy.new-address@example.com', 'user'],
            ['zed mary-janet', 'zy.new-address@example.com', 'user'],
          ],
        );
        assert.deepEqual(await words('ac.old-address@example.com'), []);
        assert.deepEqual(await words('ad.deleted@example.com'), []);
        assert.deepEqual(
          (await words('ze.moved@example.com')).map((r) => r.word),
          ['jane moving', 'mary-jane moving', 'moving'],
        );
        assert.deepEqual(await words('ae.moving@example.com'), []);
        assert.deepEqual(
          (await words('zf.both@example.com')).map((r) => r.word),
          ['both', 'jane both', 'mary-jane both'],
        );
        assert.deepEqual(await words('af.both@example.com'), []);
        const orphans = await sql<{ n: number }>`select count(*)::int as n from user_name_words
        where email not in (select email from users)`.execute(t.ctx.db);
        assert.equal(orphans.rows[0]?.n, 0);
      });

    it('pages and totals equal the general plans and the documented order, whichever plan reads tier 1', async () => {
      const users = await allUsers(t);
      const filters: Array<[Record<string, string>, (u: UserRow) => boolean]> = [
        [{}, () => true],
        [{ role: 'user' }, (u) => u.role === 'user'],
        [{ status: 'active' }, (u) => u.status === 'active'],
        [{ status: 'disabled', role: 'user' }, (u) => u.status === 'disabled' && u.role === 'user'],
      ];
      // walkBudget 2 leaves every tier sparse after two entries, so the name-word plan finishes it;
      // with a name-word cap of 1 it finds too many entries and hands over to the general plans.
      const sparse = {
        filterFirstMax: 0,
        filteredScanMax: 0,
        candidateMax: 0,
        walkBudget: 2,
        countBudget: 3,
      };
      try {
        for (const [tuning, max] of [
          [defaults, 20_000],
          [sparse, 20_000],
          [sparse, 1],
        ] as const) {
          Object.assign(SEARCH_TUNING, tuning);
          NAME_WORDS.max = max;
          for (const q of [
            'mary-jan',
            'MARY-JANE',
            'jan',
            'mary',
            'e',
            ' m',
            '-jane',
            'else',
            'zed',
            'qox',
          ]) {
            for (const [params, keep] of filters) {
              const expected = reference(users, q, keep);
              for (const limit of ['2', '20']) {
                const label = `${JSON.stringify(q)} ${JSON.stringify(params)} limit=${limit} walk=${tuning.walkBudget} max=${max}`;
                SEARCH_SWITCHES.nameWords = false;
                const general = await all({ q, limit, ...params });
                SEARCH_SWITCHES.nameWords = true;
                const words = await all({ q, limit, ...params });
                assert.deepEqual(words, general, label);
                assert.deepEqual(words.emails, expected, label);
                assert.equal(words.total, Math.min(expected.length, SEARCH_TOTAL_CAP), label);
              }
            }
          }
        }
      } finally {
        Object.assign(SEARCH_TUNING, defaults);
        SEARCH_SWITCHES.nameWords = true;
        NAME_WORDS.max = 20_000;
      }
    });

    it(`a total past ${SEARCH_TOTAL_CAP} name-word matches is the cap`, async () => {
      await insertUsers(
        t,
        Array.from({ length: SEARCH_TOTAL_CAP + 5 }, (_, i) => ({
          email: `bulk${i}@words.test`,
          name: `Bulk Quillon-${i % 2 === 0 ? 'Even' : 'Odd'}`,
        })),
      );
      for (const q of ['quillon', 'quillon-', 'bulk quillon']) {
        SEARCH_SWITCHES.nameWords = false;
        const general = json<Page>(await t.app.inject({ url: `/api/v1/users/search?q=${q}`, headers }));
        SEARCH_SWITCHES.nameWords = true;
        const words = json<Page>(await t.app.inject({ url: `/api/v1/users/search?q=${q}`, headers }));
        assert.equal(words.total, SEARCH_TOTAL_CAP, q);
        assert.deepEqual(words, general, q);
      }
      const few = json<Page>(
        await t.app.inject({ url: '/api/v1/users/search?q=quillon-odd&limit=100', headers }),
      );
      assert.equal(few.total, 502); // the odd ones among 1,005: counted exactly, under the cap
    });

    it('reverts and re-applies', async () => {
      const database = openDatabase(fresh.url);
      try {
        const migrator = migratorOf(database.db);
        assert.equal((await migrator.migrateTo(BEFORE)).error, undefined);
        const tables = async () => (await database.db.introspection.getTables()).map((x) => x.name);
        assert.ok(!(await tables()).includes('user_name_words'));
        // Writes to users work without the triggers' function.
        await sql`update users set name = 'Reverted' where email = 'be.other@example.com'`.execute(
          database.db,
        );
        const up = await migrator.migrateTo(NAME);
        assert.equal(up.error, undefined);
        assert.equal(up.results?.[0]?.status, 'Success');
        if (dialect === 'postgres') {
          assert.ok((await tables()).includes('user_name_words'));
          const rows = await sql<{ word: string }>`select word from user_name_words
            where email = 'be.other@example.com'`.execute(database.db);
          assert.deepEqual(
            rows.rows.map((r) => r.word),
            ['reverted'],
          );
        }
      } finally {
        await database.close();
      }
    });
  });
}
