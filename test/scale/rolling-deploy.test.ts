import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from '../../src/platform/db/database.ts';
import { buildTestApp, json } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

// During a rolling deploy `gatehouse migrate` (new version) runs first; instances of the old
// version keep running and may restart before they are replaced. They must start and serve.
for (const dialect of DIALECTS) {
  describe(`a database migrated by a newer version [${dialect}]`, () => {
    it('an older instance still starts and serves; its migrate command refuses clearly', async () => {
      const first = await buildTestApp(dialect);
      await sql`insert into gatehouse_migrations (name, timestamp) values (${'29991231000000_from_a_newer_version'}, ${new Date().toISOString()})`.execute(
        first.ctx.db,
      );
      await first.close();
      const older = await first.restart();
      try {
        const core = await older.app.inject({ url: '/api/v1/core/health' });
        assert.equal(core.statusCode, 200, core.body);
        assert.equal(json<{ migrations: { pending: number } }>(core).migrations.pending, 0);
        assert.equal((await older.app.inject({ url: '/health/detailed' })).statusCode, 200);
        await assert.rejects(migrateToLatest(older.ctx.db), /migrated by a newer version of Gatehouse/);
      } finally {
        await older.destroy();
      }
    });
  });
}

describe('an up-to-date database [postgres]', {
  skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL',
}, () => {
  it('instances start without taking the migration lock (a transaction pooler cannot hold it)', async () => {
    const first = await buildTestApp('postgres');
    const holder = new pg.Client({ connectionString: first.databaseUrl });
    await holder.connect();
    try {
      // Kysely's migration lock: held elsewhere (a migrate job, or one leaked by a pooler).
      await holder.query('select pg_advisory_lock(3853314791062309107)');
      const second = await first.restart();
      assert.equal((await second.app.inject({ url: '/api/v1/core/health' })).statusCode, 200);
      await second.close();
    } finally {
      await holder.end();
      await first.destroy();
    }
  });
});
