import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SEARCH_TOTAL_CAP, SEARCH_TUNING } from '../../src/modules/users/search/users-search.service.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { allUsers, byteCompare, insertUsers, type UserSpec } from './fixtures.ts';

type Page = {
  data: Array<{ id: string; email: string; name: string }>;
  next_cursor: string | null;
  total: number;
};

const PEOPLE: UserSpec[] = [
  { email: 'ann@example.com', name: 'Ann Example' },
  { email: 'anna.smith@example.com', name: 'Anna Smith' },
  { email: 'annabelle@example.org', name: 'Belle', role: 'admin' },
  { email: 'mj@example.com', name: 'Mary Ann Jones' },
  { email: 'jr@example.com', name: 'Jean-Annick Roy', status: 'disabled' },
  { email: 'joanne@example.com', name: 'Joanne W' },
  { email: 'hl@example.com', name: 'Hannah Lee' },
  { email: 'bob@example.com', name: 'Bob Builder' },
  { email: 'anders@example.net', name: 'Anders And' },
  { email: 'x.ann@example.com', name: 'Xavier' },
  { email: 'emile@example.fr', name: 'Émile Zola' },
  { email: 'zoe@example.fr', name: 'ZOË ÅNGSTRÖM' },
  { email: 'percent@example.com', name: '100% Real' },
  { email: 'under_score@example.com', name: 'Under Score' },
  { email: 'underxscore@example.com', name: 'Underx Score' },
  { email: 'obrien@example.ie', name: "Conan O'Brien" },
  { email: 'quote@example.com', name: 'Say "Hi" Now' },
  { email: 'back@example.com', name: 'Back\\Slash' },
  { email: 'star@example.com', name: 'Star * (paren) ^caret' },
  { email: "o'neil@example.com", name: 'Neil' },
  { email: 'invited.ann@example.com', name: 'Invited Ann', status: 'invited' },
];

/** docs/api.md §6's relevance: exact email, then a prefix of the email or of a name word, then the rest. */
function tierOf(u: UserRow, q: string): number {
  const qf = q.toLowerCase();
  const name = u.name.toLowerCase();
  if (u.email === qf) return 0;
  if (u.email.startsWith(qf) || name.startsWith(qf) || name.includes(` ${qf}`) || name.includes(`-${qf}`)) {
    return 1;
  }
  return u.email.includes(qf) || name.includes(qf) ? 2 : 3;
}

function reference(users: UserRow[], q: string, keep: (u: UserRow) => boolean = () => true): string[] {
  return users
    .filter(keep)
    .map((u) => ({ u, tier: tierOf(u, q) }))
    .filter((x) => x.tier < 3)
    .sort((a, b) => a.tier - b.tier || byteCompare(a.u.email, b.u.email))
    .map((x) => x.u.email);
}

/** Small thresholds force the walk, its index fallbacks and the counting walk on a small table. */
const PLANS: Array<[string, typeof SEARCH_TUNING]> = [
  ['default', { ...SEARCH_TUNING }],
  [
    'walk',
    { filterFirstMax: 0, filteredScanMax: 0, candidateMax: 0, walkBudget: 100_000, countBudget: 100_000 },
  ],
  [
    'walk+fallback',
    { filterFirstMax: 0, filteredScanMax: 0, candidateMax: 0, walkBudget: 3, countBudget: 5 },
  ],
  [
    'walk+filtered',
    { filterFirstMax: 0, filteredScanMax: 100_000, candidateMax: 0, walkBudget: 3, countBudget: 5 },
  ],
];

for (const dialect of DIALECTS) {
  describe(`users search [${dialect}]`, () => {
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
      Object.assign(SEARCH_TUNING, PLANS[0]![1]);
      return t.destroy();
    });

    const search = async (params: Record<string, string>): Promise<Page> => {
      const res = await t.app.inject({ url: `/api/v1/users/search?${new URLSearchParams(params)}`, headers });
      assert.equal(res.statusCode, 200, res.body);
      return json<Page>(res);
    };
    const searchAll = async (params: Record<string, string>) => {
      const emails: string[] = [];
      let cursor: string | null = null;
      let total = -1;
      do {
        const p: Page = await search({ ...params, ...(cursor ? { cursor } : {}) });
        if (total < 0) total = p.total;
        emails.push(...p.data.map((u) => u.email));
        cursor = p.next_cursor;
      } while (cursor);
      return { emails, total };
    };

    it('orders by relevance: exact email, then email or name-word prefix, then substring; ties by email', async () => {
      const page = await search({ q: 'ann' });
      assert.deepEqual(
        page.data.map((u) => u.email),
        [
          'ann@example.com',
          'anna.smith@example.com',
          'annabelle@example.org',
          'invited.ann@example.com',
          'jr@example.com',
          'mj@example.com',
          'hl@example.com',
          'joanne@example.com',
          'x.ann@example.com',
        ],
      );
      assert.equal(page.total, 9);
      assert.equal(page.next_cursor, null);
    });

    it('is case-insensitive, Unicode letters included', async () => {
      for (const q of ['ANN', 'Ann', 'aNn']) {
        assert.deepEqual((await searchAll({ q })).emails, reference(users, 'ann'), q);
      }
      assert.deepEqual(
        (await search({ q: 'ÉMILE' })).data.map((u) => u.email),
        ['emile@example.fr'],
      );
      assert.deepEqual(
        (await search({ q: 'émile' })).data.map((u) => u.email),
        ['emile@example.fr'],
      );
      assert.deepEqual(
        (await search({ q: 'zoë å' })).data.map((u) => u.email),
        ['zoe@example.fr'],
      );
      assert.deepEqual(
        (await search({ q: 'ström' })).data.map((u) => u.email),
        ['zoe@example.fr'],
      );
    });

    it('matches %, _, quotes, backslashes and FTS syntax literally', async () => {
      const cases: Array<[string, string[]]> = [
        ['%', ['percent@example.com']],
        ['0%', ['percent@example.com']],
        ['_', ['under_score@example.com']],
        ['r_s', ['under_score@example.com']],
        ["'", ["o'neil@example.com", 'obrien@example.ie']],
        ["o'", ["o'neil@example.com", 'obrien@example.ie']],
        ['"', ['quote@example.com']],
        ['"hi"', ['quote@example.com']],
        ['\\', ['back@example.com']],
        ['k\\s', ['back@example.com']],
        ['* (', ['star@example.com']],
        ['^c', ['star@example.com']],
        ['%_', []],
        ['OR', reference(users, 'OR')],
        ['NEAR(', []],
      ];
      for (const [q, expected] of cases) {
        assert.deepEqual((await searchAll({ q })).emails, expected, q);
      }
    });

    it('every plan returns the same pages and totals, for short and long queries, with filters', async () => {
      const queries = [
        'a',
        'n',
        'an',
        'nn',
        'ann',
        'AN',
        'example',
        'exa',
        '.com',
        'ann@example.com',
        'zz',
        'é',
        'e-a',
        ' ',
      ];
      const filters: Array<[Record<string, string>, (u: UserRow) => boolean]> = [
        [{}, () => true],
        [{ role: 'admin' }, (u) => u.role === 'admin'],
        [{ status: 'active' }, (u) => u.status === 'active'],
        [{ status: 'disabled', role: 'user' }, (u) => u.status === 'disabled' && u.role === 'user'],
      ];
      try {
        for (const [plan, tuning] of PLANS) {
          Object.assign(SEARCH_TUNING, tuning);
          for (const q of queries) {
            for (const [params, keep] of filters) {
              const expected = reference(users, q, keep);
              for (const limit of plan === 'default' ? ['3', '100'] : ['3']) {
                const { emails, total } = await searchAll({ q, limit, ...params });
                const label = `${plan} q=${JSON.stringify(q)} ${JSON.stringify(params)} limit=${limit}`;
                assert.deepEqual(emails, expected, label);
                assert.equal(total, Math.min(expected.length, SEARCH_TOTAL_CAP), label);
              }
            }
          }
        }
      } finally {
        Object.assign(SEARCH_TUNING, PLANS[0]![1]);
      }
    });

    it('cursors are bound to their query; bad q and parameters are 400', async () => {
      const first = await search({ q: 'ann', limit: '2' });
      assert.ok(first.next_cursor);
      const other = await t.app.inject({
        url: `/api/v1/users/search?q=bob&cursor=${encodeURIComponent(first.next_cursor)}`,
        headers,
      });
      assert.equal(other.statusCode, 400);
      assert.equal(json(other).code, 'validation_failed');
      // The same query in another case folds to the same search, so its cursor carries over.
      const upper = await search({ q: 'ANN', limit: '2', cursor: first.next_cursor });
      assert.equal(upper.data[0]?.email, 'annabelle@example.org');
      const list = json<Page>(await t.app.inject({ url: '/api/v1/users?limit=1', headers }));
      const foreign = await t.app.inject({
        url: `/api/v1/users/search?q=ann&cursor=${list.next_cursor}`,
        headers,
      });
      assert.equal(foreign.statusCode, 400);
      for (const query of ['', 'q=', `q=${'x'.repeat(101)}`, 'q=a%01b', 'q=ann&limit=0', 'q=ann&role=boss']) {
        const res = await t.app.inject({ url: `/api/v1/users/search?${query}`, headers });
        assert.equal(res.statusCode, 400, query);
      }
      // 100 characters is fine.
      assert.equal((await search({ q: 'x'.repeat(100) })).total, 0);
    });

    it(`total counts matches up to ${SEARCH_TOTAL_CAP}`, async () => {
      await insertUsers(
        t,
        Array.from({ length: SEARCH_TOTAL_CAP + 5 }, (_, i) => ({
          email: `bulk${i}@capped.test`,
          name: 'Bulk',
        })),
      );
      const page = await search({ q: 'capped' });
      assert.equal(page.total, SEARCH_TOTAL_CAP);
      assert.equal(page.data.length, 20);
      const few = await search({ q: 'bulk100' });
      assert.equal(few.total, 6); // bulk100 and bulk1000 … bulk1004
    });
  });
}
