/**
 * SCIM 2.0 at scale (docs/api.md §23; docs/benchmarks.md, "SCIM at scale"): p50/p95 of a Users
 * `filter=userName eq "…"` lookup and of a 100-user page (`startIndex=1&count=100`) of an organization
 * of N members, through app.inject() (the token check, tenancy, the SCIM serialisation included).
 *
 *   node bench/scim.ts [--database-url sqlite:./data/scim-bench.db] [--database-url postgres://…]
 *                      [--users 1000000] [--iterations 200]
 *   npm run bench -- --scim          (both engines; SCIM_BENCH_USERS=100000 to shrink N)
 *
 * The seed is one INSERT … SELECT per 20,000 users (a recursive CTE on SQLite, generate_series on
 * PostgreSQL, its triggers skipped), run once: a database holding the members already is reused. Targets: filter p95 ≤ 5 ms,
 * page p95 ≤ 20 ms.
 */
import { parseArgs } from 'node:util';
import { type Kysely, sql } from 'kysely';
import { startService } from '../src/kernel/server.ts';
import { loadConfig } from '../src/platform/config.ts';
import type { DB } from '../src/platform/db/schema.ts';
import { createLogger } from '../src/platform/logger.ts';
import { hashSecret, secretFormat } from '../src/platform/secret-format.ts';

const FILTER_TARGET_MS = 5;
const PAGE_TARGET_MS = 20;
// One statement per chunk; small enough for DATABASE_STATEMENT_TIMEOUT_MS with the users triggers.
const CHUNK = 20_000;
const ORG_ID = '00000000-0000-7000-8000-5c1500000001';

const pad = (dialect: string, expr: string) =>
  dialect === 'postgres' ? `lpad((${expr})::text, 12, '0')` : `printf('%012d', ${expr})`;

async function seed(db: Kysely<DB>, dialect: string, want: number, log: (l: string) => void): Promise<void> {
  const now = Date.now();
  await db
    .insertInto('organizations')
    .values({
      id: ORG_ID,
      name: 'SCIM bench',
      slug: 'scim-bench',
      join_by_domain: 0,
      default_roles: '["member"]',
      require_mfa: 0,
      metadata: '{}',
      member_count: 0,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const present = Number(
    (
      await db
        .selectFrom('organization_members')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organization_id', '=', ORG_ID)
        .executeTakeFirstOrThrow()
    ).n,
  );
  for (let from = present; from < want; from += CHUNK) {
    const to = Math.min(want, from + CHUNK) - 1;
    const series =
      dialect === 'postgres'
        ? `from generate_series(${from}, ${to}) as n(i)`
        : `from (with recursive s(i) as (select ${from} union all select i + 1 from s where i < ${to}) select i from s) as n`;
    const id = `'00000000-0000-7000-8000-' || ${pad(dialect, 'n.i')}`;
    await db.transaction().execute(async (trx) => {
      // PostgreSQL: the users' search triggers (name and address grams) are skipped for the seed
      // (replica mode, this transaction only): SCIM reads none of them, and they made a 20,000-row
      // chunk take minutes. The rows themselves are consistent, so no check is lost.
      if (dialect === 'postgres') await sql`set local session_replication_role = replica`.execute(trx);
      await sql
        .raw(
          `insert into users (id, email, name, role, status, password_hash, email_verified, created_at, updated_at, last_login_at, created_via, kind, locale)
           select ${id}, 'scim-bench-' || n.i || '@bench-scim.example', 'Bench ' || n.i, 'user', 'active', null, 1, ${now}, ${now}, null, 'import', 'person', null ${series}`,
        )
        .execute(trx);
      await sql
        .raw(
          `insert into organization_members (organization_id, user_id, joined_at) select '${ORG_ID}', ${id}, ${now} + n.i ${series}`,
        )
        .execute(trx);
    });
    log(`seeded ${to + 1} of ${want}`);
  }
  await db.updateTable('organizations').set({ member_count: want }).where('id', '=', ORG_ID).execute();
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Seeds (once) and measures one database; prints one line per case. */
export async function runScimBench(options: {
  urls: string[];
  users: number;
  iterations: number;
  log: (line: string) => void;
}): Promise<void> {
  for (const url of options.urls) {
    const config = loadConfig({
      DATABASE_URL: url,
      PUBLIC_URL: 'http://bench.gatehouse.test',
      API_FORM: 'full',
      LOG_LEVEL: 'silent',
      PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
      SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
      // The seed's INSERT … SELECT runs the users' search triggers for a whole chunk.
      DATABASE_STATEMENT_TIMEOUT_MS: '600000',
    });
    const service = await startService(config, createLogger('silent'));
    const { app, ctx } = service;
    const dialect = ctx.database.dialect;
    const t0 = Date.now();
    await seed(ctx.db, dialect, options.users, options.log);
    await sql`analyze`.execute(ctx.db);
    options.log(`${dialect}: ${options.users} members ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const token = secretFormat('gscim_').create();
    await ctx.db.deleteFrom('scim_tokens').where('organization_id', '=', ORG_ID).execute();
    await ctx.db
      .insertInto('scim_tokens')
      .values({
        organization_id: ORG_ID,
        token_hash: hashSecret(token),
        prefix: token.slice(0, 12),
        created_at: Date.now(),
      })
      .execute();
    const headers = { authorization: `Bearer ${token}` };
    const cases: Array<[string, (i: number) => string, number]> = [
      [
        'Users filter userName eq',
        (i) =>
          `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "scim-bench-${(i * 7919) % options.users}@bench-scim.example"`)}`,
        FILTER_TARGET_MS,
      ],
      ['Users page of 100 (startIndex=1)', () => '/scim/v2/Users?startIndex=1&count=100', PAGE_TARGET_MS],
    ];
    for (const [name, path, target] of cases) {
      for (let i = 0; i < 20; i++) await app.inject({ url: path(i), headers });
      const times: number[] = [];
      for (let i = 0; i < options.iterations; i++) {
        const start = process.hrtime.bigint();
        const res = await app.inject({ url: path(i), headers });
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
        if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
      times.sort((a, b) => a - b);
      const p95 = percentile(times, 95);
      console.log(
        `${dialect.padEnd(8)} N=${options.users} ${name.padEnd(36)} p50 ${percentile(times, 50).toFixed(2)} ms  p95 ${p95.toFixed(2)} ms  ${p95 <= target ? 'ok' : `OVER ${target} ms`}`,
      );
    }
    await service.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string', multiple: true, default: ['sqlite:./data/scim-bench.db'] },
      users: { type: 'string', default: process.env.SCIM_BENCH_USERS ?? '1000000' },
      iterations: { type: 'string', default: '200' },
    },
  });
  await runScimBench({
    urls: values['database-url'],
    users: Number(values.users),
    iterations: Number(values.iterations),
    log: (line) => process.stderr.write(`bench scim: ${line}\n`),
  });
}
