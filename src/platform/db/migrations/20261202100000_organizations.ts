import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * Organizations, roles and permissions (docs/api.md §21, docs/organizations.md).
 *
 * - `roles`: the one catalogue of role names and the permissions each grants (JSON array text),
 *   seeded with `owner` (Gatehouse's three `org:` permissions) and `member` (none).
 * - `user_roles`: roles held globally (outside any organization).
 * - `organizations`: one customer; `member_count` is kept in the transaction of every member change
 *   so the list never counts rows. `domains` live in `organization_domains`, one row per domain so a
 *   domain belongs to at most one organization (its primary key).
 * - `organization_members` / `organization_member_roles`: who belongs and with which roles there.
 *   The `(organization_id, joined_at, user_id)` index serves the members list's keyset pages.
 * - `organization_departures`: who left or was removed, so joining by domain never adds them back.
 * - `organization_invitations`: invitations by mail (only the token's hash is stored).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('roles')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  const now = Date.now();
  await db
    .insertInto('roles' as never)
    .values([
      {
        name: 'owner',
        description: 'Manages the organization: its members and its settings',
        permissions: JSON.stringify(['org:members:read', 'org:members:manage', 'org:settings:manage']),
        created_at: now,
        updated_at: now,
      },
      {
        name: 'member',
        description: 'A member of the organization',
        permissions: '[]',
        created_at: now,
        updated_at: now,
      },
    ] as never)
    .execute();

  await db.schema
    .createTable('user_roles')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_roles_pk', ['user_id', 'role'])
    .execute();
  await db.schema.createIndex('user_roles_role_idx').on('user_roles').column('role').execute();

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('join_by_domain', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('default_roles', 'text', (c) => c.notNull().defaultTo('["member"]'))
    .addColumn('require_mfa', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('member_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  // `q` on the admin list matches name or slug by prefix/containment; the name index serves ordering
  // by name in the console, the id (UUIDv7, time-ordered) primary key serves the keyset pages.
  await db.schema.createIndex('organizations_name_idx').on('organizations').column('name').execute();

  await db.schema
    .createTable('organization_domains')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('organization_domains_org_idx')
    .on('organization_domains')
    .column('organization_id')
    .execute();

  await db.schema
    .createTable('organization_members')
    .addColumn('organization_id', 'text', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('joined_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_members_pk', ['organization_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('organization_members_user_idx')
    .on('organization_members')
    .column('user_id')
    .execute();
  await db.schema
    .createIndex('organization_members_page_idx')
    .on('organization_members')
    .columns(['organization_id', 'joined_at', 'user_id'])
    .execute();

  await db.schema
    .createTable('organization_member_roles')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_member_roles_pk', ['organization_id', 'user_id', 'role'])
    // A member's roles go with the membership (leaving, removal, the organization's deletion).
    .addForeignKeyConstraint(
      'organization_member_roles_member_fk',
      ['organization_id', 'user_id'],
      'organization_members',
      ['organization_id', 'user_id'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('organization_member_roles_role_idx')
    .on('organization_member_roles')
    .column('role')
    .execute();

  await db.schema
    .createTable('organization_departures')
    .addColumn('organization_id', 'text', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('left_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_departures_pk', ['organization_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('organization_invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .execute();
  await db.schema
    .createIndex('organization_invitations_org_idx')
    .on('organization_invitations')
    .columns(['organization_id', 'created_at'])
    .execute();
}

/** Drops the tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'organization_invitations',
    'organization_departures',
    'organization_member_roles',
    'organization_members',
    'organization_domains',
    'organizations',
    'user_roles',
    'roles',
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
