import { type Kysely, sql } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * One table for every mailed one-time link (password reset, e-mail verification, e-mail change):
 * the token only as its SHA-256, the purpose, the address the link was sent for, an expiry and the
 * used/replaced marks that make it single-use (docs/recovery.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('one_time_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) =>
      c.notNull().check(sql.raw(`purpose in ('password_reset', 'email_verify', 'email_change')`)),
    )
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .addColumn('replaced_at', ts)
    .execute();
  // Issuing replaces the user's live link of the purpose: found by (user_id, purpose).
  await db.schema
    .createIndex('one_time_links_user_idx')
    .on('one_time_links')
    .columns(['user_id', 'purpose'])
    .execute();
}

/** Drops the links table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('one_time_links').ifExists().execute();
}
