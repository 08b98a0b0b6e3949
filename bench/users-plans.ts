/**
 * The query plans behind the slow cases of bench/users-scale.ts: runs each case once through the
 * service (as the endpoint does), records every statement it sends, and prints each statement's
 * plan — `EXPLAIN (ANALYZE, BUFFERS)` on PostgreSQL, `EXPLAIN QUERY PLAN` plus its time on SQLite.
 *
 *   node bench/users-plans.ts --database-url postgres://… [--database-url sqlite:./data/scale.db]
 *                             [--only "mary-jan,son,email,7 days"]
 *
 * The database must already be seeded and migrated (bench/users-scale.ts does both). Results:
 * docs/benchmarks.md (Users at scale).
 */
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { type CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { AppContext } from '../src/kernel/context.types.ts';
import { loadCursorCodec } from '../src/modules/users/list/cursors.ts';
import { listUsers } from '../src/modules/users/list/users-list.service.ts';
import { searchUsers } from '../src/modules/users/search/users-search.service.ts';
import { configureSqlite } from '../src/platform/db/database.queries.ts';
import type { DB } from '../src/platform/db/schema.ts';

interface Traced {
  db: Kysely<DB>;
  statements: CompiledQuery[];
  explain(q: CompiledQuery): Promise<string>;
  close(): Promise<void>;
}

function open(url: string): Traced {
  const statements: CompiledQuery[] = [];
  const log = (event: { level: string; query: CompiledQuery }) => {
    if (event.level === 'query') statements.push(event.query);
  };
  if (url.startsWith('sqlite:')) {
    // The service's own connection settings (memory map, page cache, gh_fold).
    const file = configureSqlite(new SQLite(url.slice('sqlite:'.length)));
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: file }), log });
    return {
      db,
      statements,
      async explain(q) {
        const params = q.parameters as unknown[];
        const plan = file.prepare(`explain query plan ${q.sql}`).all(...params) as Array<{
          id: number;
          parent: number;
          detail: string;
        }>;
        const depth = new Map<number, number>([[0, 0]]);
        const lines = plan.map((r) => {
          const d = (depth.get(r.parent) ?? 0) + 1;
          depth.set(r.id, d);
          return `${'  '.repeat(d - 1)}${r.detail}`;
        });
        const stmt = file.prepare(q.sql);
        const runs: number[] = [];
        for (let i = 0; i < 5; i++) {
          const start = process.hrtime.bigint();
          if (stmt.reader) stmt.all(...params);
          else stmt.run(...params);
          runs.push(Number(process.hrtime.bigint() - start) / 1e6);
        }
        runs.sort((a, b) => a - b);
        return `${lines.join('\n')}\n(median of 5 runs: ${runs[2]!.toFixed(2)} ms)`;
      },
      close: () => db.destroy(),
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log });
  return {
    db,
    statements,
    async explain(q) {
      const res = await pool.query(`explain (analyze, buffers) ${q.sql}`, q.parameters as unknown[]);
      return res.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    },
    close: () => db.destroy(),
  };
}

async function plans(url: string, only: string[] | null): Promise<void> {
  const t = open(url);
  const dialect = url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
  const ctx = { db: t.db, database: { dialect } } as unknown as AppContext;
  const codec = await loadCursorCodec(t.db);
  const sample = await sql<{ email: string }>`select email from users
    where id in (select id from users order by id limit 20000) limit 1 offset 777`.execute(t.db);
  const email = sample.rows[0]!.email;
  const week = new Date(Date.now() - 7 * 86_400_000).toISOString();
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['search 8-char "mary-jan"', () => searchUsers(ctx, codec, { q: 'mary-jan', limit: 20 })],
    ['search 3-char "son"', () => searchUsers(ctx, codec, { q: 'son', limit: 20 })],
    [`search exact email (${email})`, () => searchUsers(ctx, codec, { q: email, limit: 20 })],
    [
      'list created in the last 7 days, sort=name',
      () => listUsers(ctx, codec, { sort: 'name', created_after: week, limit: 20 }),
    ],
  ];
  console.log(`\n## ${dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'}\n`);
  for (const [name, run] of cases) {
    if (only && !only.some((o) => name.includes(o))) continue;
    await run(); // warm the cache
    t.statements.length = 0;
    const start = process.hrtime.bigint();
    await run();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const statements = [...t.statements];
    console.log(`### ${name}: ${statements.length} statements, ${ms.toFixed(2)} ms\n`);
    for (const q of statements) {
      if (q.sql.startsWith('explain')) {
        console.log(`- planner estimate: \`${oneLine(q.sql)}\`\n`);
        continue;
      }
      console.log(
        `\`\`\`\n${oneLine(q.sql)}\n-- ${JSON.stringify(q.parameters)}\n${await t.explain(q)}\n\`\`\`\n`,
      );
    }
  }
  await t.close();
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'database-url': { type: 'string', multiple: true }, only: { type: 'string' } },
  });
  const only = values.only ? values.only.split(',') : null;
  for (const url of values['database-url'] ?? ['sqlite:./data/scale.db']) await plans(url, only);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
