import { type Kysely, sql } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/*
 * docs/api.md §22 (docs/api-keys.md): service accounts and API keys.
 *
 * - `users.kind`: 'person' (every existing row) or 'service'. A service account has no e-mail, but
 *   `users.email` stays NOT NULL and unique: it holds `service:<id>`, which has no `@` and so can
 *   never be typed as an address, matched by a sign-in, a link by e-mail or an invitation; the user
 *   object shows `email: null` (toPublicUser). Keeping the column as it is leaves the users_scale
 *   counters, sort indexes and search triggers untouched (on SQLite a NOT NULL column cannot be
 *   relaxed without rebuilding the table and every trigger on it).
 * - `api_keys`: stored as a SHA-256 hash only; the owner is a user or an organization, with no
 *   foreign key, so a deleted owner's keys stay behind as revoked ("revoked", never "invalid").
 * - `rate_window_slots`: exact sliding windows, one slot per request a window allows (src/identity/budgets/).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .alterTable('users')
    .addColumn('kind', 'text', (c) =>
      c.notNull().defaultTo('person').check(sql`kind in ('person', 'service')`),
    )
    .execute();
  // Service accounts are few: counted and listed through this partial index, never a scan.
  await sql`create index users_service_idx on users (created_at, id) where kind = 'service'`.execute(db);

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('owner_type', 'text', (c) => c.notNull().check(sql`owner_type in ('user', 'organization')`))
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text')
    .addColumn('expires_at', ts)
    .addColumn('rate_requests', 'integer')
    .addColumn('rate_window_s', 'integer')
    .addColumn('last_used_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('revoked_at', ts)
    .execute();
  await db.schema
    .createIndex('api_keys_owner_idx')
    .on('api_keys')
    .columns(['owner_type', 'owner_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('api_keys_created_idx').on('api_keys').columns(['created_at', 'id']).execute();

  // One row per slot of a key's window (src/identity/budgets/sliding-window.ts): a slot is free
  // once its last use left the window.
  await db.schema
    .createTable('rate_window_slots')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_window_slots_pkey', ['key', 'slot'])
    .execute();
  await db.schema
    .createIndex('rate_window_slots_at_idx')
    .on('rate_window_slots')
    .columns(['key', 'at'])
    .execute();
}

/** Drops the tables and the column again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rate_window_slots').ifExists().execute();
  await db.schema.dropTable('api_keys').ifExists().execute();
  await sql`drop index if exists users_service_idx`.execute(db);
  await db.schema.alterTable('users').dropColumn('kind').execute();
}
