/**
 * Fills a database with realistic users for scale tests and benchmarks.
 *
 *   npm run seed -- --users 1000000 [--database-url sqlite:./data/scale.db | postgres://…]
 *                   [--seed 42] [--password <pw>]
 *
 * The database is migrated first; users are added to whatever is there. Without --database-url,
 * DATABASE_URL (environment or .env) is used. --password sets one shared password for every
 * active seeded user (hashed once). Counters and the search index are kept by the schema's
 * triggers, exactly as for any other insert.
 */
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { createPasswordHasher } from '../src/identity/passwords/passwords.ts';
import { loadConfig, readEnvironment } from '../src/platform/config.ts';
import { migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import type { UserRow } from '../src/platform/db/schema.ts';
import { seedUsers } from './seed-data.ts';

const COLUMNS = [
  'id',
  'email',
  'name',
  'role',
  'status',
  'password_hash',
  'email_verified',
  'created_at',
  'updated_at',
  'last_login_at',
] as const satisfies ReadonlyArray<keyof UserRow>;

/** Seeds `count` users into the database at `url`; returns the elapsed seconds. */
export async function seed(
  url: string,
  count: number,
  options: { seed?: number; password?: string; log?: (line: string) => void } = {},
): Promise<number> {
  const log = options.log ?? (() => {});
  const database = openDatabase(url, { poolMax: 2 });
  await migrateToLatest(database.db);
  await database.close();
  const passwordHash = options.password ? await createPasswordHasher().hash(options.password) : null;
  const started = performance.now();
  const batches = seedUsers({ count, seed: options.seed ?? 42, passwordHash }, 20_000);
  let done = 0;
  const progress = (n: number) => {
    done += n;
    if (done % 100_000 < n || done === count) {
      log(`  ${done.toLocaleString('en')} users, ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  };
  if (url.startsWith('sqlite:')) seedSqlite(url.slice('sqlite:'.length), batches, progress);
  else await seedPostgres(url, batches, progress);
  return (performance.now() - started) / 1000;
}

function seedSqlite(path: string, batches: Iterable<UserRow[]>, progress: (n: number) => void): void {
  const sqlite = new SQLite(path);
  // Bulk load: a crash mid-seed only loses the seed, so durability is traded for speed here.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = OFF');
  sqlite.pragma('cache_size = -262144');
  sqlite.pragma('temp_store = MEMORY');
  const insert = sqlite.prepare(
    `insert into users (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`,
  );
  const insertBatch = sqlite.transaction((rows: UserRow[]) => {
    for (const r of rows) insert.run(COLUMNS.map((c) => r[c]));
  });
  for (const rows of batches) {
    insertBatch(rows);
    progress(rows.length);
  }
  sqlite.pragma('optimize');
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  sqlite.close();
}

async function seedPostgres(
  url: string,
  batches: Iterable<UserRow[]>,
  progress: (n: number) => void,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const types = ['text', 'text', 'text', 'text', 'text', 'text', 'int', 'int8', 'int8', 'int8'];
    // One statement per batch: each column travels as one array parameter (unnest), so 20,000
    // rows cost one round trip and one parse.
    const text = `insert into users (${COLUMNS.join(', ')})
      select * from unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;
    for (const rows of batches) {
      await client.query(
        text,
        COLUMNS.map((c) => rows.map((r) => r[c])),
      );
      progress(rows.length);
    }
    // Statistics for the planner and a visibility map for index-only scans, as autovacuum would.
    await client.query('vacuum analyze users');
    await client.query('vacuum analyze user_name_words');
    // Every seeded row bumped a counter row: a million dead versions of a few thousand rows.
    // VACUUM FULL rewrites the two small tables compactly (a plain VACUUM leaves them 50 MB).
    await client.query('vacuum full analyze user_counts');
    await client.query('vacuum full analyze user_login_days');
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      users: { type: 'string', default: '1000' },
      'database-url': { type: 'string' },
      seed: { type: 'string', default: '42' },
      password: { type: 'string' },
    },
  });
  const count = Number(values.users);
  if (!Number.isInteger(count) || count < 1) throw new Error('--users must be a positive whole number');
  const url = values['database-url'] ?? loadConfig(readEnvironment()).databaseUrl;
  console.log(`seeding ${count.toLocaleString('en')} users into ${url.replace(/\/\/[^@]*@/, '//***@')}`);
  const seconds = await seed(url, count, {
    seed: Number(values.seed),
    ...(values.password ? { password: values.password } : {}),
    log: (line) => console.log(line),
  });
  console.log(`done: ${count.toLocaleString('en')} users in ${seconds.toFixed(1)} s`);
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    console.error(`seed failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
