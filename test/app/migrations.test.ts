import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Migrator, NO_MIGRATIONS } from 'kysely/migration';
import { migrateToLatest, migrationStatus, openDatabase } from '../../src/platform/db/database.ts';
import { migrations } from '../../src/platform/db/migrations/index.ts';
import { buildTestApp, json } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NAMES = Object.keys(migrations);
const TABLES = [
  'users',
  'sessions',
  'refresh_tokens',
  'signing_keys',
  'module_overrides',
  'throttle_counters',
  'identities',
  'invitations',
  'outbox',
];

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'src/cli.ts'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

async function tableNames(url: string): Promise<string[]> {
  const database = openDatabase(url);
  try {
    return (await database.db.introspection.getTables()).map((t) => t.name);
  } finally {
    await database.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`migrations [${dialect}]`, () => {
    let fresh: TestDatabase;
    before(async () => {
      fresh = await createTestDatabase(dialect);
    });
    after(() => fresh.drop());

    it('apply in name order on an empty database, then find nothing to do', async () => {
      assert.deepEqual(NAMES, [...NAMES].sort(), 'migration names sort in the order they apply');
      for (const name of NAMES) assert.match(name, /^\d{14}_[a-z0-9_]+$/);
      const database = openDatabase(fresh.url);
      try {
        assert.deepEqual(await migrationStatus(database.db), { applied: 0, pending: NAMES.length });
        assert.deepEqual(await migrateToLatest(database.db), NAMES);
        assert.deepEqual(await migrateToLatest(database.db), []);
        assert.deepEqual(await migrationStatus(database.db), { applied: NAMES.length, pending: 0 });
      } finally {
        await database.close();
      }
      const tables = await tableNames(fresh.url);
      for (const table of TABLES) assert.ok(tables.includes(table), `table ${table} exists`);
    });

    it('go down to nothing and up again (the down steps are portable too)', async () => {
      const database = openDatabase(fresh.url);
      try {
        const migrator = new Migrator({
          db: database.db,
          provider: { getMigrations: async () => migrations },
          migrationTableName: 'gatehouse_migrations',
          migrationLockTableName: 'gatehouse_migrations_lock',
        });
        const down = await migrator.migrateTo(NO_MIGRATIONS);
        assert.equal(down.error, undefined);
        assert.deepEqual(await migrationStatus(database.db), { applied: 0, pending: NAMES.length });
        const left = (await database.db.introspection.getTables()).map((t) => t.name);
        for (const table of TABLES) assert.ok(!left.includes(table), `table ${table} dropped`);
        assert.deepEqual(await migrateToLatest(database.db), NAMES);
      } finally {
        await database.close();
      }
    });

    it('two processes migrating the same empty database at once both succeed, applying once', async () => {
      // Separate processes: better-sqlite3 waits for a lock synchronously, so two connections in
      // one process would block each other's event loop.
      const shared = await createTestDatabase(dialect);
      try {
        const runs = await Promise.all([1, 2, 3].map(() => cli(['migrate'], { DATABASE_URL: shared.url })));
        for (const r of runs) assert.equal(r.code, 0, r.out);
        // One process applies them all (it holds the lock throughout); the others find nothing to do.
        const applied = new RegExp(`applied ${NAMES.length} migration`);
        assert.equal(runs.filter((r) => applied.test(r.out)).length, 1);
        assert.equal(runs.filter((r) => /database is up to date/.test(r.out)).length, 2);
        const database = openDatabase(shared.url);
        try {
          assert.deepEqual(await migrationStatus(database.db), { applied: NAMES.length, pending: 0 });
        } finally {
          await database.close();
        }
      } finally {
        await shared.drop();
      }
    });

    it('a service starts on an empty database and starts again on the same one (restart)', async () => {
      const first = await buildTestApp(dialect);
      let second: Awaited<ReturnType<typeof buildTestApp>> | undefined;
      try {
        const keysBefore = await first.ctx.db.selectFrom('signing_keys').select('kid').execute();
        const core = await first.app.inject({ url: '/api/v1/core/health' });
        assert.equal(core.statusCode, 200);
        assert.deepEqual(json(core).migrations, { applied: NAMES.length, pending: 0 });
        await first.close();

        second = await first.restart();
        const again = await second.app.inject({ url: '/api/v1/core/health' });
        assert.equal(again.statusCode, 200);
        assert.deepEqual(json(again).migrations, { applied: NAMES.length, pending: 0 });
        const admins = await second.ctx.db
          .selectFrom('users')
          .select('id')
          .where('role', '=', 'admin')
          .execute();
        assert.equal(admins.length, 1, 'the first admin is created once');
        const keysAfter = await second.ctx.db.selectFrom('signing_keys').select('kid').execute();
        assert.deepEqual(keysAfter, keysBefore, 'a restart reuses the signing keys');
      } finally {
        if (second) await second.destroy();
        else await first.destroy();
      }
    });

    it('`gatehouse migrate` applies, then reports the database up to date', async () => {
      const db = await createTestDatabase(dialect);
      try {
        const one = await cli(['migrate'], { DATABASE_URL: db.url });
        assert.equal(one.code, 0, one.out);
        assert.match(one.out, new RegExp(`applied ${NAMES.length} migration\\(s\\): ${NAMES.join(', ')}`));
        const two = await cli(['migrate'], { DATABASE_URL: db.url });
        assert.equal(two.code, 0, two.out);
        assert.match(two.out, /database is up to date/);
      } finally {
        await db.drop();
      }
    });
  });
}
