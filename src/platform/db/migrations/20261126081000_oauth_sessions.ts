import type { Kysely } from 'kysely';

/**
 * One session model for the authorization server (docs/api.md §17, "Sessions are one"): a grant is
 * a Gatehouse session of an OAuth client (`client_id`), and one that ends with the browser session
 * it was opened from names that session (`parent_id`; cleared once an `offline_access` token is
 * issued). `oauth_session_links` ties oidc-provider's browser session (by the SHA-256 of its
 * `uid`) to the Gatehouse session of the hosted sign-in, so that ending one ends the other.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('client_id', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('parent_id', 'text').execute();
  await db.schema.createIndex('sessions_parent_idx').on('sessions').column('parent_id').execute();
  await db.schema
    .createTable('oauth_session_links')
    .addColumn('uid_hash', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .execute();
  await db.schema
    .createIndex('oauth_session_links_session_idx')
    .on('oauth_session_links')
    .column('session_id')
    .execute();
}

/** Drops the table and the columns again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_session_links').ifExists().execute();
  await db.schema.dropIndex('sessions_parent_idx').ifExists().execute();
  await db.schema.alterTable('sessions').dropColumn('parent_id').execute();
  await db.schema.alterTable('sessions').dropColumn('client_id').execute();
}
