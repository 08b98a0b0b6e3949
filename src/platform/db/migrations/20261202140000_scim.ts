import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * docs/api.md §23 (module `sso`, SCIM 2.0): one hashed bearer token per organization; what SCIM
 * knows of a person in an organization (externalId, whether deactivated, the roles to restore, the
 * roles its groups added); SCIM groups and their members; and the organization's map from a group's
 * displayName to roles (`scim_group_roles`, JSON object).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .alterTable('organizations')
    .addColumn('scim_group_roles', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema
    .createTable('scim_tokens')
    .addColumn('organization_id', 'text', (c) =>
      c.primaryKey().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('scim_users')
    .addColumn('organization_id', 'text', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('external_id', 'text')
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    // JSON arrays: the direct roles kept while deactivated; the roles groups added (held by no direct grant).
    .addColumn('saved_roles', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('group_roles', 'text', (c) => c.notNull().defaultTo('[]'))
    // 1 when deactivation disabled the account (at the organization's domains): reactivation enables it.
    .addColumn('disabled_account', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('scim_users_pk', ['organization_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('scim_users_external_idx')
    .on('scim_users')
    .columns(['organization_id', 'external_id'])
    .execute();
  await db.schema
    .createIndex('scim_users_inactive_idx')
    .on('scim_users')
    .columns(['organization_id', 'active', 'user_id'])
    .execute();
  await db.schema.createIndex('scim_users_user_idx').on('scim_users').column('user_id').execute();
  await db.schema
    .createTable('scim_groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addUniqueConstraint('scim_groups_name_unique', ['organization_id', 'display_name'])
    .execute();
  await db.schema
    .createTable('scim_group_members')
    .addColumn('group_id', 'text', (c) => c.notNull().references('scim_groups.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('scim_group_members_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('scim_group_members_user_idx')
    .on('scim_group_members')
    .column('user_id')
    .execute();
}

/** Drops the tables and the column again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('scim_group_members').ifExists().execute();
  await db.schema.dropTable('scim_groups').ifExists().execute();
  await db.schema.dropTable('scim_users').ifExists().execute();
  await db.schema.dropTable('scim_tokens').ifExists().execute();
  await db.schema.alterTable('organizations').dropColumn('scim_group_roles').execute();
}
