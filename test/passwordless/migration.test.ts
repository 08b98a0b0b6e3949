import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { v7 as uuidv7 } from 'uuid';
import { migrateToLatest, openDatabase } from '../../src/platform/db/database.ts';
import { migrations } from '../../src/platform/db/migrations/index.ts';
import { createTestDatabase, DIALECTS } from '../helpers/databases.ts';

// Migration 20261126072000_email_signin widens one_time_links' purpose CHECK (a table rebuild on
// SQLite) and adds the code columns: links that exist before it must come through unchanged, and the
// CHECK must still refuse an unknown purpose.

const BEFORE = '20261126040100_id_token_uses';

for (const dialect of DIALECTS) {
  describe(`migration email_signin [${dialect}]`, () => {
    it('keeps existing links, accepts email_signin rows with a code, still refuses unknown purposes, and goes down', async () => {
      const fresh = await createTestDatabase(dialect);
      const database = openDatabase(fresh.url);
      const migrator = new Migrator({
        db: database.db,
        provider: { getMigrations: async () => migrations },
        migrationTableName: 'gatehouse_migrations',
        migrationLockTableName: 'gatehouse_migrations_lock',
      });
      try {
        assert.equal((await migrator.migrateTo(BEFORE)).error, undefined);
        const db = database.db;
        const userId = uuidv7();
        const now = Date.now();
        await sql`insert into users (id, email, name, role, status, password_hash, email_verified, created_at, updated_at, last_login_at)
          values (${userId}, 'old@example.com', '', 'user', 'active', null, 1, ${now}, ${now}, null)`.execute(
          db,
        );
        const linkId = uuidv7();
        await sql`insert into one_time_links (id, user_id, purpose, token_hash, email, created_at, expires_at, used_at, replaced_at)
          values (${linkId}, ${userId}, 'password_reset', 'hash-1', 'old@example.com', ${now}, ${now + 60_000}, null, null)`.execute(
          db,
        );

        await migrateToLatest(db);
        const kept = await db
          .selectFrom('one_time_links')
          .selectAll()
          .where('id', '=', linkId)
          .executeTakeFirst();
        assert.equal(kept?.purpose, 'password_reset');
        assert.equal(kept?.token_hash, 'hash-1');
        assert.equal(kept?.code_hash, null);
        assert.equal(Number(kept?.code_tries), 0);
        await db
          .insertInto('one_time_links')
          .values({
            id: uuidv7(),
            user_id: userId,
            purpose: 'email_signin',
            token_hash: 'hash-2',
            email: 'old@example.com',
            created_at: now,
            expires_at: now + 60_000,
            used_at: null,
            replaced_at: null,
            code_hash: 'hmac',
            code_tries: 0,
          })
          .execute();
        await assert.rejects(
          sql`insert into one_time_links (id, user_id, purpose, token_hash, email, created_at, expires_at)
            values (${uuidv7()}, ${userId}, 'something_else', 'hash-3', 'old@example.com', ${now}, ${now})`.execute(
            db,
          ),
          'the CHECK still holds',
        );

        assert.equal((await migrator.migrateTo(BEFORE)).error, undefined, 'down');
        const after = await sql<{ purpose: string }>`select purpose from one_time_links`.execute(db);
        assert.deepEqual(
          after.rows.map((r) => r.purpose),
          ['password_reset'],
        );
      } finally {
        await database.close();
        await fresh.drop();
      }
    });
  });
}
