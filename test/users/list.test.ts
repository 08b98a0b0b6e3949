import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LIST_TUNING } from '../../src/modules/users/list/users-list.service.ts';
import { SORTS } from '../../src/modules/users/users.schemas.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { allUsers, byteCompare, DAY, insertUsers, type UserSpec } from './fixtures.ts';

type Page = { data: Array<{ id: string; email: string }>; next_cursor: string | null; total: number };

const BASE = Date.UTC(2026, 0, 10); // a midnight: some users are created exactly on day edges
const NAMES = [
  'alice Smith',
  'Alice Smith',
  'Bob',
  'bob',
  'Émile Zola',
  'Zoë',
  "O'Brien",
  'Mary-Jane',
  '',
  'zed',
];

function specs(): UserSpec[] {
  const out: UserSpec[] = [];
  for (let i = 0; i < 57; i++) {
    out.push({
      email: `user${String((i * 37) % 101).padStart(3, '0')}.${i}@example.com`,
      name: NAMES[i % NAMES.length]!,
      role: i % 9 === 0 ? 'admin' : 'user',
      status: i % 7 === 0 ? 'disabled' : i % 11 === 0 ? 'invited' : 'active',
      // Several users share a timestamp (ties broken by id); some sit exactly on midnight.
      created_at: BASE + Math.floor(i / 3) * (DAY / 2) + (i % 5 === 0 ? 0 : 1000 * (i % 3)),
      last_login_at: i % 4 === 0 ? null : BASE + 20 * DAY + ((i * 7919) % 13) * 3_600_000,
    });
  }
  return out;
}

/** The order docs/api.md §6 sorts imply, with the ties and NULL placement docs/users.md defines. */
function expectedOrder(users: UserRow[], sort: string): string[] {
  const desc = sort.startsWith('-');
  const key = desc ? sort.slice(1) : sort;
  const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const value = (u: UserRow): string | number =>
    key === 'created_at'
      ? u.created_at
      : key === 'email'
        ? u.email
        : key === 'name'
          ? asciiLower(u.name)
          : (u.last_login_at ?? -1);
  const sorted = [...users].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    const c = typeof va === 'number' ? va - (vb as number) : byteCompare(va, vb as string);
    return c !== 0 ? c : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
  if (desc) sorted.reverse();
  return sorted.map((u) => u.id);
}

for (const dialect of DIALECTS) {
  describe(`users list [${dialect}]`, () => {
    let t: TestApp;
    let headers: { authorization: string };
    before(async () => {
      t = await buildTestApp(dialect);
      headers = await authHeaders(t, await firstAdmin(t));
      await insertUsers(t, specs());
    });
    after(() => {
      LIST_TUNING.filterFirstMax = 1000;
      return t.destroy();
    });

    const page = async (query: string): Promise<Page> => {
      const res = await t.app.inject({ url: `/api/v1/users?${query}`, headers });
      assert.equal(res.statusCode, 200, res.body);
      return json<Page>(res);
    };
    const pageAll = async (query: string, between?: () => Promise<void>) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      let first: Page | null = null;
      do {
        const p: Page = await page(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        first ??= p;
        ids.push(...p.data.map((u) => u.id));
        cursor = p.next_cursor;
        if (cursor && between) await between();
      } while (cursor);
      return { ids, total: first!.total };
    };

    it('every sort pages through all users in the defined order, total = count', async () => {
      const users = await allUsers(t);
      for (const sort of SORTS) {
        const { ids, total } = await pageAll(`sort=${sort}&limit=7`);
        assert.equal(total, users.length, sort);
        assert.deepEqual(ids, expectedOrder(users, sort), sort);
      }
      // The default is -created_at, 20 per page.
      const first = await page('');
      assert.equal(first.data.length, 20);
      assert.deepEqual(
        first.data.map((u) => u.id),
        expectedOrder(users, '-created_at').slice(0, 20),
      );
    });

    it('paging while users are created neither skips nor repeats anyone', async () => {
      const before = await allUsers(t);
      let n = 0;
      const insertSome = async () => {
        n++;
        // New users sort first under -created_at and on both sides of the cursor by email.
        await insertUsers(t, [
          { email: `aaa-new${n}@example.com`, name: 'New' },
          { email: `zzz-new${n}@example.com`, name: 'New' },
        ]);
      };
      for (const sort of ['-created_at', 'email', 'created_at', '-last_login_at']) {
        const snapshot = await allUsers(t);
        const { ids, total } = await pageAll(`sort=${sort}&limit=10`, insertSome);
        assert.equal(new Set(ids).size, ids.length, `${sort}: repeated`);
        const seen = new Set(ids);
        for (const u of snapshot) assert.ok(seen.has(u.id), `${sort}: skipped ${u.email}`);
        assert.equal(total, snapshot.length, sort);
        if (sort === '-created_at') assert.equal(ids.length, snapshot.length);
      }
      assert.ok(n >= 4 && (await allUsers(t)).length > before.length);
    });

    it('filters by role, status and creation time (from inclusive, until exclusive), with exact totals', async () => {
      const users = await allUsers(t);
      const from = BASE + 2 * DAY;
      const until = BASE + 7 * DAY + 1000;
      const cases: Array<[string, (u: UserRow) => boolean]> = [
        ['role=admin', (u) => u.role === 'admin'],
        ['status=disabled', (u) => u.status === 'disabled'],
        ['status=invited&role=user', (u) => u.status === 'invited' && u.role === 'user'],
        [`created_after=${iso(from)}`, (u) => u.created_at >= from],
        [`created_before=${iso(until)}`, (u) => u.created_at < until],
        [
          `created_after=${iso(from)}&created_before=${iso(until)}`,
          (u) => u.created_at >= from && u.created_at < until,
        ],
        [
          `created_after=${iso(from + 1000)}&created_before=${iso(from + DAY / 2 + 2000)}&role=user`,
          (u) => u.created_at >= from + 1000 && u.created_at < from + DAY / 2 + 2000 && u.role === 'user',
        ],
        [`created_after=${iso(BASE + 100 * DAY)}`, (u) => u.created_at >= BASE + 100 * DAY],
        [`created_after=${iso(until)}&created_before=${iso(from)}`, () => false],
        [`created_before=${iso(0)}`, () => false],
      ];
      for (const filterFirstMax of [0, 1_000_000]) {
        LIST_TUNING.filterFirstMax = filterFirstMax;
        for (const [query, keep] of cases) {
          const matching = users.filter(keep);
          for (const sort of ['-created_at', 'name', '-last_login_at']) {
            const { ids, total } = await pageAll(`${query}&sort=${sort}&limit=6`);
            assert.equal(total, matching.length, `${query} (${filterFirstMax})`);
            assert.deepEqual(ids, expectedOrder(matching, sort), `${query} ${sort} (${filterFirstMax})`);
          }
        }
      }
      LIST_TUNING.filterFirstMax = 1000;
    });

    it('refuses malformed, tampered and foreign cursors and bad parameters with 400', async () => {
      const first = await page('sort=email&limit=5');
      const cursor = first.next_cursor!;
      const [data, mac] = cursor.split('.') as [string, string];
      const payload = JSON.parse(Buffer.from(data, 'base64url').toString());
      const forged = Buffer.from(JSON.stringify({ ...payload, v: 'a' })).toString('base64url');
      const flipped = mac.startsWith('A') ? `B${mac.slice(1)}` : `A${mac.slice(1)}`;
      const bad = [
        'cursor=abc',
        'cursor=.',
        `cursor=${data}`,
        `cursor=${forged}.${mac}`,
        `cursor=${data}.${flipped}`,
        `cursor=${data}.${mac}x`,
        `cursor=${'x'.repeat(2000)}`,
        `sort=name&cursor=${cursor}`,
        'limit=0',
        'limit=101',
        'limit=ten',
        'sort=password_hash',
        'role=root',
        'status=gone',
        'created_after=yesterday',
        'created_before=2026-13-01T00:00:00Z',
      ];
      for (const query of bad) {
        const res = await t.app.inject({ url: `/api/v1/users?${query}`, headers });
        assert.equal(res.statusCode, 400, query);
        assert.equal(json(res).code, 'validation_failed', query);
      }
      // A search cursor is not a list cursor.
      const search = json<Page>(await t.app.inject({ url: '/api/v1/users/search?q=user&limit=2', headers }));
      const res = await t.app.inject({ url: `/api/v1/users?cursor=${search.next_cursor}`, headers });
      assert.equal(res.statusCode, 400);
      // The same cursor twice gives the same page.
      const again = await page(`sort=email&limit=5&cursor=${cursor}`);
      assert.deepEqual(again, await page(`sort=email&limit=5&cursor=${cursor}`));
    });
  });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
