import type { Kysely } from 'kysely';

/**
 * docs/api.md §17: a confidential client an admin registers with `"pkce_required": false` may
 * leave PKCE out (relying parties that cannot send it; a `nonce` is then required). Every client
 * so far required PKCE, so they all keep 1.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('oauth_clients')
    .addColumn('pkce_required', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

/** Drops the column again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_clients').dropColumn('pkce_required').execute();
}
