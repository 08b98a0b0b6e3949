/**
 * Organizations at scale (docs/api.md §21; issue 42's bench rows): p50/p95 of the admin's
 * organizations list and an organization's members list, first page and a page deep in the keyset,
 * on a database of --orgs organizations and one organization of --members members, measured
 * through app.inject() (routing, auth guard, tenancy check, validation, serialisation included).
 *
 *   node bench/organizations-scale.ts [--database-url sqlite:./data/orgs.db] [--database-url postgres://…]
 *                                     [--orgs 100000] [--members 100000] [--iterations 200]
 *
 * Each database is seeded first (plain batched inserts) when it holds fewer rows. Target: p95 ≤ 10 ms
 * for every case. Results: docs/benchmarks.md ("Organizations at scale").
 */
import { parseArgs } from 'node:util';
import { v7 as uuidv7 } from 'uuid';
import { PASSWORD_LOGIN } from '../src/identity/index.ts';
import { openSession } from '../src/identity/sessions.ts';
import { startService } from '../src/kernel/server.ts';
import { createOrPromoteAdmin } from '../src/modules/auth/first-admin.ts';
import { loadConfig } from '../src/platform/config.ts';
import type { Db } from '../src/platform/db/schema.ts';
import { createLogger } from '../src/platform/logger.ts';

const TARGET_MS = 10;
const BATCH = 1000;
const BIG = 'bench-big-organization';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string', multiple: true, default: ['sqlite:./data/orgs-scale.db'] },
    orgs: { type: 'string', default: '100000' },
    members: { type: 'string', default: '100000' },
    iterations: { type: 'string', default: '200' },
  },
});
const ORGS = Number(values.orgs);
const MEMBERS = Number(values.members);
const ITERATIONS = Number(values.iterations);

const cursor = (position: Record<string, string | number>) =>
  Buffer.from(JSON.stringify(position)).toString('base64url');
const redact = (url: string) => url.replace(/\/\/[^@/]*@/, '//…@');

async function countOf(db: Db, table: 'organizations' | 'organization_members'): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function seedOrganizations(db: Db, want: number): Promise<void> {
  const present = await countOf(db, 'organizations');
  for (let done = present; done < want; done += BATCH) {
    const now = Date.now();
    const rows = Array.from({ length: Math.min(BATCH, want - done) }, (_, i) => ({
      id: uuidv7(),
      name: `Bench organization ${done + i}`,
      slug: `bench-organization-${done + i}`,
      join_by_domain: 0,
      default_roles: '["member"]',
      require_mfa: 0,
      metadata: '{}',
      member_count: 0,
      created_at: now,
      updated_at: now,
    }));
    await db.insertInto('organizations').values(rows).execute();
  }
}

async function seedBigOrganization(db: Db, want: number): Promise<string> {
  let org = await db.selectFrom('organizations').select('id').where('slug', '=', BIG).executeTakeFirst();
  if (!org) {
    const now = Date.now();
    org = { id: uuidv7() };
    await db
      .insertInto('organizations')
      .values({
        id: org.id,
        name: 'Bench big',
        slug: BIG,
        join_by_domain: 0,
        default_roles: '["member"]',
        require_mfa: 0,
        metadata: '{}',
        member_count: 0,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  const id = org.id;
  const present = Number(
    (
      await db
        .selectFrom('organization_members')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organization_id', '=', id)
        .executeTakeFirstOrThrow()
    ).n,
  );
  for (let done = present; done < want; done += BATCH) {
    const now = Date.now();
    const users = Array.from({ length: Math.min(BATCH, want - done) }, (_, i) => ({
      id: uuidv7(),
      email: `bench-member-${done + i}@bench-orgs.example`,
      name: `Member ${done + i}`,
      role: 'user' as const,
      status: 'active' as const,
      password_hash: null,
      email_verified: 1,
      created_at: now,
      updated_at: now,
      last_login_at: null,
      created_via: 'import' as const,
    }));
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('users').values(users).execute();
      await trx
        .insertInto('organization_members')
        .values(users.map((u, i) => ({ organization_id: id, user_id: u.id, joined_at: now + i })))
        .execute();
      await trx
        .insertInto('organization_member_roles')
        .values(users.map((u) => ({ organization_id: id, user_id: u.id, role: 'member' })))
        .execute();
    });
  }
  await db.updateTable('organizations').set({ member_count: want }).where('id', '=', id).execute();
  return id;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

for (const url of values['database-url']) {
  const config = loadConfig({
    DATABASE_URL: url,
    API_FORM: 'full',
    LOG_LEVEL: 'silent',
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
    SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
  });
  const service = await startService(config, createLogger('silent'));
  const { app, ctx } = service;
  const db = ctx.db;
  const t0 = Date.now();
  await seedOrganizations(db, ORGS);
  const big = await seedBigOrganization(db, MEMBERS);
  console.log(
    `${redact(url)}: seeded or found ${ORGS} organizations, ${MEMBERS} members in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
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

  const midOrg = await db
    .selectFrom('organizations')
    .select('id')
    .orderBy('id')
    .offset(Math.floor(ORGS / 2))
    .limit(1)
    .executeTakeFirstOrThrow();
  const midMember = await db
    .selectFrom('organization_members')
    .select(['joined_at', 'user_id'])
    .where('organization_id', '=', big)
    .orderBy('joined_at')
    .orderBy('user_id')
    .offset(Math.floor(MEMBERS / 2))
    .limit(1)
    .executeTakeFirstOrThrow();
  const cases: Array<[string, string]> = [
    ['organizations list, first page (limit 20)', '/api/v1/organizations?limit=20'],
    [
      `organizations list, page past ${Math.floor(ORGS / 2)}th`,
      `/api/v1/organizations?limit=20&cursor=${cursor({ id: midOrg.id })}`,
    ],
    ['organizations list, q=organization 4242', '/api/v1/organizations?limit=20&q=organization%204242'],
    ['members list, first page (limit 20)', `/api/v1/organizations/${big}/members?limit=20`],
    [
      `members list, page past ${Math.floor(MEMBERS / 2)}th`,
      `/api/v1/organizations/${big}/members?limit=20&cursor=${cursor({ j: Number(midMember.joined_at), u: midMember.user_id })}`,
    ],
  ];
  for (const [name, path] of cases) {
    for (let i = 0; i < 20; i++) await app.inject({ url: path, headers });
    const times: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const start = process.hrtime.bigint();
      const res = await app.inject({ url: path, headers });
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    }
    times.sort((a, b) => a - b);
    const p95 = percentile(times, 95);
    console.log(
      `${ctx.database.dialect.padEnd(8)} ${name.padEnd(48)} p50 ${percentile(times, 50).toFixed(2)} ms  p95 ${p95.toFixed(2)} ms  ${p95 <= TARGET_MS ? 'ok' : `OVER ${TARGET_MS} ms`}`,
    );
  }
  await service.close();
}
