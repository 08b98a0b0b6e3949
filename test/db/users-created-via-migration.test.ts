import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { v7 as uuidv7 } from 'uuid';
import { migrateToLatest, openDatabase } from '../../src/platform/db/database.ts';
import { migrations } from '../../src/platform/db/migrations/index.ts';
import type { DB } from '../../src/platform/db/schema.ts';
import { createTestDatabase, DIALECTS } from '../helpers/databases.ts';

// docs/api.md §16: every account's origin is recorded (users.created_via). Rows that exist before the
// migration are classified from the evidence the database holds; where there is none, `admin` only
// when public sign-up can never have run there (migration 20261126040000 says why).

const BEFORE = '20261125060000_auth_notify';

/** A database migrated up to just before users.created_via, with `seed` run there, then migrated up. */
async function backfilled(
  dialect: (typeof DIALECTS)[number],
  seed: (db: Kysely<DB>) => Promise<void>,
): Promise<Map<string, string>> {
  const fresh = await createTestDatabase(dialect);
  const database = openDatabase(fresh.url);
  try {
    const migrator = new Migrator({
      db: database.db,
      provider: { getMigrations: async () => migrations },
      migrationTableName: 'gatehouse_migrations',
      migrationLockTableName: 'gatehouse_migrations_lock',
    });
    const up = await migrator.migrateTo(BEFORE);
    assert.equal(up.error, undefined);
    await seed(database.db);
    await migrateToLatest(database.db);
    const rows = await database.db.selectFrom('users').select(['email', 'created_via']).execute();
    return new Map(rows.map((r) => [r.email, r.created_via]));
  } finally {
    await database.close();
    await fresh.drop();
  }
}

async function user(db: Kysely<DB>, email: string, verified = 0): Promise<string> {
  const id = uuidv7();
  const now = Date.now();
  await sql`insert into users (id, email, name, role, status, password_hash, email_verified, created_at, updated_at, last_login_at)
    values (${id}, ${email}, '', 'user', 'active', null, ${verified}, ${now}, ${now}, null)`.execute(db);
  return id;
}

async function audit(db: Kysely<DB>, action: string, targetId: string, details: Record<string, unknown>) {
  await sql`insert into audit_log (id, at, action, outcome, actor_type, actor_id, target_type, target_id, ip, user_agent, details)
    values (${uuidv7()}, ${Date.now()}, ${action}, 'success', 'system', null, 'user', ${targetId}, null, null, ${JSON.stringify(details)})`.execute(
    db,
  );
}

async function invitation(db: Kysely<DB>, userId: string, email: string) {
  const now = Date.now();
  await sql`insert into invitations (id, user_id, email, role, token_hash, invited_by, created_at, expires_at, consumed_at, replaced_at)
    values (${uuidv7()}, ${userId}, ${email}, 'user', ${uuidv7()}, null, ${now}, ${now + 1000}, ${now}, null)`.execute(
    db,
  );
}

/** One account of each path whose audit entry survived, and one whose entry is gone. */
async function seedEvidence(db: Kysely<DB>) {
  await audit(db, 'user.create', await user(db, 'api@example.com'), { role: 'user', via: 'api' });
  await audit(db, 'user.create', await user(db, 'idp@example.com', 1), {
    via: 'idp',
    issuer: 'x',
    role: 'user',
  });
  await audit(db, 'user.create', await user(db, 'import@example.com'), {
    via: 'cli.users_import',
    role: 'user',
  });
  await audit(db, 'user.create', await user(db, 'boot@example.com', 1), { role: 'admin', via: 'bootstrap' });
  await invitation(db, await user(db, 'invited@example.com', 1), 'invited@example.com');
  await user(db, 'pruned@example.com');
}

for (const dialect of DIALECTS) {
  describe(`users.created_via backfill [${dialect}]`, () => {
    it('classifies existing accounts from their audit entries and invitations; the rest are admin-made when sign-up never ran', async () => {
      const origins = await backfilled(dialect, seedEvidence);
      assert.deepEqual(Object.fromEntries(origins), {
        'api@example.com': 'admin',
        'idp@example.com': 'idp',
        'import@example.com': 'import',
        'boot@example.com': 'first_admin',
        'invited@example.com': 'invitation',
        'pruned@example.com': 'admin',
      });
    });

    it('pre-account-hijack: where sign-up may have run, a sign-up is `signup` and an account without evidence `unknown` (never vouched for)', async () => {
      const origins = await backfilled(dialect, async (db) => {
        await seedEvidence(db);
        await audit(db, 'user.signup', await user(db, 'squatter@example.com'), { mailed: true });
        await sql`insert into module_overrides (name, enabled, updated_at) values ('registration', 0, ${Date.now()})`.execute(
          db,
        );
      });
      assert.equal(origins.get('squatter@example.com'), 'signup');
      assert.equal(origins.get('pruned@example.com'), 'unknown');
      assert.equal(origins.get('api@example.com'), 'admin');
      assert.equal(origins.get('invited@example.com'), 'invitation');
    });
  });
}
