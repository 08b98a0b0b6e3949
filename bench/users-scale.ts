/**
 * Users at scale: p50/p95 of list, search, stats and get on a database of a million users,
 * measured through app.inject() (routing, auth guard, validation, serialisation included).
 *
 *   node bench/users-scale.ts [--database-url sqlite:./data/scale.db] [--database-url postgres://…]
 *                             [--users 1000000] [--iterations 200] [--only list,search]
 *                             [--match "mary-jan,7 days"] [--ab]
 *
 * --match keeps the cases whose name contains one of the strings. --ab measures every case twice
 * in the same run, first with the plans of docs/benchmarks.md's "1M-user misses" switched off
 * (SEARCH_SWITCHES: atProbes, nameWords, emailPrefix, containsFirst; LIST_TUNING.unnamedMax), then on.
 *
 * Each database is seeded first (scripts/seed.ts) when it holds fewer users than --users.
 * Targets (p95): list ≤ 10 ms, search ≤ 25 ms, stats ≤ 50 ms, get ≤ 2 ms. Results: docs/benchmarks.md.
 */
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { seed } from '../scripts/seed.ts';
import { PASSWORD_LOGIN } from '../src/identity/index.ts';
import { openSession } from '../src/identity/sessions.ts';
import { startService } from '../src/kernel/server.ts';
import { createOrPromoteAdmin } from '../src/modules/auth/first-admin.ts';
import { loadCursorCodec } from '../src/modules/users/list/cursors.ts';
import { sortKeySql } from '../src/modules/users/list/users-list.queries.ts';
import { LIST_TUNING } from '../src/modules/users/list/users-list.service.ts';
import { SEARCH_SWITCHES } from '../src/modules/users/search/users-search.service.ts';
import { SORTS } from '../src/modules/users/users.schemas.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createLogger } from '../src/platform/logger.ts';

const TARGETS: Record<string, number> = { list: 10, search: 25, stats: 50, get: 2 };

interface Case {
  group: 'list' | 'search' | 'stats' | 'get';
  name: string;
  url: () => string;
}

interface Result {
  group: string;
  name: string;
  p50: number;
  p95: number;
  max: number;
}

interface Selection {
  only: string[] | null;
  match: string[] | null;
  ab: boolean;
}

function selected(s: Selection, group: string, name: string): boolean {
  return (!s.only || s.only.includes(group)) && (!s.match || s.match.some((m) => name.includes(m)));
}

/** Switches the plans the --ab run compares on or off. */
function switchPlans(on: boolean): void {
  SEARCH_SWITCHES.atProbes = on;
  SEARCH_SWITCHES.nameWords = on;
  SEARCH_SWITCHES.emailPrefix = on;
  SEARCH_SWITCHES.containsFirst = on;
  LIST_TUNING.unnamedMax = on ? UNNAMED_MAX : 0;
}
const UNNAMED_MAX = LIST_TUNING.unnamedMax;

async function benchDatabase(url: string, users: number, iterations: number, selection: Selection) {
  const config = loadConfig({
    DATABASE_URL: url,
    ADMIN_EMAIL: 'bench-admin@gatehouse.test',
    ADMIN_PASSWORD: 'bench admin password for scale runs',
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://bench.test',
    // The setup's one-off OFFSET queries (finding the 500,000th row) may take seconds.
    DATABASE_STATEMENT_TIMEOUT_MS: '120000',
    // Latency is measured, not shed: on a busy machine one 503 would end the run.
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
  });
  let service = await startService(config, createLogger('silent'));
  const present = Number(
    (await sql<{ n: number }>`select count(*) as n from users`.execute(service.ctx.db)).rows[0]?.n ?? 0,
  );
  if (present < users) {
    await service.close();
    console.log(`seeding ${users - present} users into ${redact(url)}…`);
    const seconds = await seed(url, users - present, { seed: 1000 + present });
    console.log(`seeded in ${seconds.toFixed(1)} s`);
    service = await startService(config, createLogger('silent'));
  }
  const { app, ctx } = service;
  const db = ctx.db;
  const dialect = ctx.database.dialect;
  // Seeded databases already have admins, so the first-admin step made none: ensure ours.
  await createOrPromoteAdmin(
    ctx,
    'bench-admin@gatehouse.test',
    'bench admin password for scale runs',
    'bench',
  );
  const admin = await db
    .selectFrom('users')
    .selectAll()
    .where('email', '=', 'bench-admin@gatehouse.test')
    .executeTakeFirstOrThrow();
  const { access_token } = await openSession(
    ctx,
    admin,
    { ip: '127.0.0.1', userAgent: 'bench' },
    PASSWORD_LOGIN,
  );
  const headers = { authorization: `Bearer ${access_token}` };
  const codec = await loadCursorCodec(db);

  // Fixtures: random ids and emails to read, and cursors half a million users deep per sort.
  const sample = await sql<{ id: string; email: string }>`select id, email from users
    where id in (select id from users order by id limit 20000) limit 2000`.execute(db);
  const pick = () => sample.rows[Math.floor(Math.random() * sample.rows.length)]!;
  const deep: Record<string, string> = {};
  for (const sort of SORTS) {
    if (!selected(selection, 'list', `page past 500,000th, sort=${sort}`)) continue;
    const desc = sort.startsWith('-');
    const key = (desc ? sort.slice(1) : sort) as Parameters<typeof sortKeySql>[1];
    const dir = sql.raw(desc ? 'desc' : 'asc');
    const expr = sortKeySql(dialect, key);
    // Setup only: OFFSET finds the 500,000th row once; the measured requests page by cursor.
    const row = await sql<{ v: string | number; id: string }>`select ${expr} as v, id from users
      order by ${expr} ${dir}, id ${dir} limit 1 offset 500000`.execute(db);
    const r = row.rows[0]!;
    deep[sort] = codec.encode({
      k: 'list',
      s: sort,
      v: typeof r.v === 'string' ? r.v : Number(r.v),
      i: r.id,
    });
  }

  const cases: Case[] = [];
  for (const sort of SORTS) {
    cases.push({ group: 'list', name: `first page, sort=${sort}`, url: () => `/api/v1/users?sort=${sort}` });
  }
  for (const sort of SORTS) {
    cases.push({
      group: 'list',
      name: `page past 500,000th, sort=${sort}`,
      url: () => `/api/v1/users?sort=${sort}&cursor=${deep[sort]}`,
    });
  }
  cases.push(
    { group: 'list', name: 'first page, role=admin', url: () => '/api/v1/users?role=admin' },
    {
      group: 'list',
      name: 'first page, status=invited, sort=email',
      url: () => '/api/v1/users?status=invited&sort=email',
    },
    {
      group: 'list',
      name: 'first page, created in the last 7 days, sort=name',
      url: () =>
        `/api/v1/users?sort=name&created_after=${new Date(Date.now() - 7 * 86_400_000).toISOString()}`,
    },
  );
  const queries: Array<[string, string]> = [
    ['2-char "an"', 'an'],
    ['2-char rare "qz"', 'qz'],
    ['3-char "son"', 'son'],
    ['3-char rare "xqz"', 'xqz'],
    ['8-char "anderson"', 'anderson'],
    ['8-char "mary-jan"', 'mary-jan'],
  ];
  for (const [name, q] of queries) {
    cases.push({ group: 'search', name, url: () => `/api/v1/users/search?q=${encodeURIComponent(q)}` });
  }
  cases.push(
    {
      group: 'search',
      name: 'exact email (random)',
      url: () => `/api/v1/users/search?q=${encodeURIComponent(pick().email)}`,
    },
    { group: 'search', name: '3-char "son", role=admin', url: () => '/api/v1/users/search?q=son&role=admin' },
    { group: 'stats', name: 'stats', url: () => '/api/v1/users/stats' },
    { group: 'get', name: 'get (random id)', url: () => `/api/v1/users/${pick().id}` },
  );

  const results: Result[] = [];
  for (const c of cases) {
    if (!selected(selection, c.group, c.name)) continue;
    if (selection.ab) {
      switchPlans(false);
      const off = await measure(app, headers, c, iterations);
      switchPlans(true);
      results.push({ group: c.group, name: `${c.name} — switched off`, ...off });
    }
    results.push({ group: c.group, name: c.name, ...(await measure(app, headers, c, iterations)) });
  }
  await service.close();
  return results;
}

async function measure(app: FastifyInstance, headers: Record<string, string>, c: Case, iterations: number) {
  const warmup = Math.max(5, Math.floor(iterations / 10));
  const times: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    const start = process.hrtime.bigint();
    const res = await app.inject({ url: c.url(), headers });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (res.statusCode !== 200) throw new Error(`${c.name}: HTTP ${res.statusCode} ${res.body}`);
    if (i >= warmup) times.push(ms);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
  return { p50: at(0.5), p95: at(0.95), max: times.at(-1)! };
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string', multiple: true },
      users: { type: 'string', default: '1000000' },
      iterations: { type: 'string', default: '200' },
      only: { type: 'string' },
      match: { type: 'string' },
      ab: { type: 'boolean', default: false },
    },
  });
  const urls = values['database-url'] ?? ['sqlite:./data/scale.db'];
  const selection: Selection = {
    only: values.only ? values.only.split(',') : null,
    match: values.match ? values.match.split(',') : null,
    ab: values.ab,
  };
  for (const url of urls) {
    const results = await benchDatabase(url, Number(values.users), Number(values.iterations), selection);
    console.log(
      `\n### ${url.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL'} — ${Number(values.users).toLocaleString('en')} users\n`,
    );
    console.log('| endpoint | case | p50 ms | p95 ms | max ms | target p95 |');
    console.log('|---|---|---:|---:|---:|---|');
    for (const r of results) {
      const target = TARGETS[r.group]!;
      const mark = r.p95 <= target ? '✓' : '✗';
      console.log(
        `| ${r.group} | ${r.name} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.max.toFixed(1)} | ≤ ${target} ${mark} |`,
      );
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
