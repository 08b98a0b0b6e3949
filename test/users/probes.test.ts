import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { LIST_TUNING } from '../../src/modules/users/list/users-list.service.ts';
import { searchTerm } from '../../src/modules/users/search/users-search.queries.ts';
import { SEARCH_SWITCHES, SEARCH_TUNING } from '../../src/modules/users/search/users-search.service.ts';
import { sqliteAtCandidates } from '../../src/modules/users/search/users-search-sqlite.queries.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { allUsers, byteCompare, DAY, everyPage, insertUsers, type UserSpec } from './fixtures.ts';

/*
 * The index probes for an '@' query and the unnamed-users plan of the name sort (docs/users.md)
 * must answer exactly what the general plans answer. Holes they could open: an email containing
 * the query with a longer local part or domain missed by the local-part probe; a name holding the
 * address missed; the unnamed users of a created_after range repeated, skipped or out of id order
 * when a page ends among them, or when there are more of them than the plan reads.
 */

const BASE = Date.UTC(2026, 0, 1);
const { candidateMax: CANDIDATE_MAX, filterFirstMax: FILTER_FIRST_MAX } = SEARCH_TUNING;

const PEOPLE: UserSpec[] = [
  { email: 'jane.doe@example.com', name: 'Jane Doe' },
  { email: 'xjane.doe@example.com', name: 'X' },
  { email: 'jane.doe@example.com.au', name: 'Jane Doe' },
  { email: 'mary-jane.doe@example.company', name: '' },
  { email: 'jane.doe@other.com', name: 'Other' },
  { email: 'doe@example.com', name: 'Just Doe' },
  { email: 'alias@example.org', name: 'Forwarded for JANE.DOE@EXAMPLE.COM' },
  { email: 'short@example.org', name: 'e@ex in a name' },
  // Unnamed users, oldest first, two of them before the created_after bound used below.
  ...Array.from({ length: 9 }, (_, i) => ({
    email: `unnamed${i}@example.net`,
    name: '',
    created_at: BASE + i * DAY,
    role: i % 3 === 0 ? ('admin' as const) : ('user' as const),
  })),
  { email: 'aaron@example.net', name: 'Aaron', created_at: BASE + 5 * DAY },
  { email: 'zed@example.net', name: 'zed', created_at: BASE + 6 * DAY },
];

for (const dialect of DIALECTS) {
  describe(`users search and list probes [${dialect}]`, () => {
    let t: TestApp;
    let headers: { authorization: string };
    let users: UserRow[];
    before(async () => {
      t = await buildTestApp(dialect);
      headers = await authHeaders(t, await firstAdmin(t));
      await insertUsers(t, PEOPLE);
      users = await allUsers(t);
    });
    after(() => {
      SEARCH_SWITCHES.atProbes = true;
      Object.assign(SEARCH_TUNING, { candidateMax: CANDIDATE_MAX, filterFirstMax: FILTER_FIRST_MAX });
      LIST_TUNING.unnamedMax = 2000;
      return t.destroy();
    });

    const all = (path: string) => everyPage(t, headers, path);

    it('an e-mail query finds longer local parts and domains, and names holding it, as the general plans do', async () => {
      // Local parts of 8, 5 and 3 characters (SQLite's two email-tail keys), 1, and two '@'.
      const queries = [
        'jane.doe@example.com',
        'JANE.DOE@example.co',
        'e.doe@example.com',
        'doe@example.com',
        'e@ex',
        'x@y@z',
      ];
      // No match at all: the probes answer an empty list, not "unknown".
      queries.push('nobody@nowhere.test');
      // With role or status filters the probes serve only when many users pass them: force that.
      SEARCH_TUNING.filterFirstMax = 0;
      for (const q of queries) {
        for (const extra of [
          '&limit=2',
          '&limit=20',
          '&limit=2&role=user',
          '&limit=2&status=active&role=admin',
        ]) {
          const path = `/api/v1/users/search?q=${encodeURIComponent(q)}${extra}`;
          SEARCH_SWITCHES.atProbes = false;
          const general = await all(path);
          SEARCH_SWITCHES.atProbes = true;
          const probed = await all(path);
          assert.deepEqual(probed, general, `${q}${extra}`);
          // More probe entries than the cap: the probe gives way to the general plans.
          SEARCH_TUNING.candidateMax = 1;
          assert.deepEqual(await all(path), general, `${q}${extra}, over the cap`);
          SEARCH_TUNING.candidateMax = CANDIDATE_MAX;
        }
      }
      SEARCH_TUNING.filterFirstMax = FILTER_FIRST_MAX;
      const { emails } = await all('/api/v1/users/search?q=jane.doe%40example.com');
      // Tier 0, then tier 1 (email prefix, a name word starting with it), then tier 2, by email.
      assert.deepEqual(emails, [
        'jane.doe@example.com',
        'alias@example.org',
        'jane.doe@example.com.au',
        'mary-jane.doe@example.company',
        'xjane.doe@example.com',
      ]);
    });

    if (dialect === 'sqlite') {
      // The probe itself answers local parts of 3 characters and more (an answer of null would hand
      // them to the FTS5 plans: the same page, at 4-15 ms a search on a million users).
      it('SQLite probes an address by the email-tail key its local part allows (6 or 3 characters)', async () => {
        const idOf = (email: string) => users.find((u) => u.email === email)?.id;
        const probe = (q: string) => sqliteAtCandidates(t.ctx.db, searchTerm(q), 2000);
        const holders = ['jane.doe@example.com', 'xjane.doe@example.com', 'mary-jane.doe@example.company'];
        for (const q of ['jane.doe@example.com', 'e.doe@example.com', 'doe@example.com']) {
          const ids = await probe(q);
          assert.ok(ids, `${q}: probed`);
          for (const email of holders) assert.ok(ids.includes(idOf(email) as string), `${q}: ${email}`);
          assert.ok(!ids.includes(idOf('jane.doe@other.com') as string), `${q}: another domain`);
        }
        assert.equal(await probe('e@ex'), null, 'a one-character local part keeps the general plans');
        const plan = await sql<{ detail: string }>`explain query plan select id from users
          where substr(email, max(instr(email, '@') - 3, 1)) >= 'doe@example.com'`.execute(t.ctx.db);
        assert.ok(
          plan.rows.some((r) => r.detail.includes('users_email_tail3_idx')),
          JSON.stringify(plan.rows),
        );
      });
    }

    it('a name-sorted created_after list pages through the unnamed users exactly, whichever plan reads them', async () => {
      const from = BASE + 2 * DAY;
      const expected = users
        .filter((u) => u.created_at >= from)
        .sort((a, b) => byteCompare(a.name.toLowerCase(), b.name.toLowerCase()) || byteCompare(a.id, b.id))
        .map((u) => u.email);
      const after = new Date(from).toISOString();
      for (const unnamedMax of [2000, 3, 0]) {
        LIST_TUNING.unnamedMax = unnamedMax;
        for (const limit of ['2', '5', '100']) {
          const got = await all(`/api/v1/users?sort=name&created_after=${after}&limit=${limit}`);
          assert.deepEqual(got.emails, expected, `unnamedMax=${unnamedMax} limit=${limit}`);
          assert.equal(got.total, expected.length);
        }
        const admins = await all(`/api/v1/users?sort=name&created_after=${after}&role=admin&limit=1`);
        assert.deepEqual(
          admins.emails,
          expected.filter((e) => users.find((u) => u.email === e)?.role === 'admin'),
          `admins, unnamedMax=${unnamedMax}`,
        );
      }
      LIST_TUNING.unnamedMax = 2000;
    });
  });
}
