import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * docs/api.md §21, "Tokens": an authorization grant may act in one organization. A grant's id is
 * its Gatehouse session's (src/modules/oauth/server/grant-sessions.ts), so the organization is kept
 * beside it, one row per grant that has one (removed with the grant's session). And resources gain
 * `rbac`: a user grant gets only the scopes its roles grant as permissions. Every existing resource
 * keeps 0 (today's behaviour).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('oauth_grant_organizations')
    .addColumn('grant_id', 'text', (c) => c.primaryKey().references('sessions.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .alterTable('oauth_resources')
    .addColumn('rbac', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

/** Drops the table and the column again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_resources').dropColumn('rbac').execute();
  await db.schema.dropTable('oauth_grant_organizations').execute();
}
