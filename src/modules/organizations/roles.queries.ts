import type { Selectable } from 'kysely';
import type { Db, RolesTable } from '../../platform/db/schema.ts';

export type RoleRow = Selectable<RolesTable>;

export async function listRoles(db: Db): Promise<RoleRow[]> {
  return db.selectFrom('roles').selectAll().orderBy('name').execute();
}

export async function findRole(db: Db, name: string): Promise<RoleRow | undefined> {
  return db.selectFrom('roles').selectAll().where('name', '=', name).executeTakeFirst();
}

/** The names among these that are in the catalogue. */
export async function existingRoleNames(db: Db, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await db
    .selectFrom('roles')
    .select('name')
    .where('name', 'in', [...names])
    .execute();
  return new Set(rows.map((r) => r.name));
}

/** Inserts or replaces a role; true when it was created. */
export async function upsertRole(
  db: Db,
  name: string,
  description: string,
  permissions: readonly string[],
  now: number,
): Promise<boolean> {
  const json = JSON.stringify(permissions);
  const updated = await db
    .updateTable('roles')
    .set({ description, permissions: json, updated_at: now })
    .where('name', '=', name)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return false;
  await db
    .insertInto('roles')
    .values({ name, description, permissions: json, created_at: now, updated_at: now })
    .execute();
  return true;
}

export async function deleteRole(db: Db, name: string): Promise<boolean> {
  const r = await db.deleteFrom('roles').where('name', '=', name).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * Whether anyone holds the role (globally or in an organization) or an organization hands it to
 * new members (`default_roles`, JSON text: a role name matches `"name"` exactly).
 */
export async function roleInUse(db: Db, name: string): Promise<boolean> {
  const held = await db
    .selectFrom('user_roles')
    .select('user_id')
    .where('role', '=', name)
    .limit(1)
    .executeTakeFirst();
  if (held) return true;
  const member = await db
    .selectFrom('organization_member_roles')
    .select('user_id')
    .where('role', '=', name)
    .limit(1)
    .executeTakeFirst();
  if (member) return true;
  // LIKE narrows (its `_` may match more), the parsed list decides.
  const defaults = await db
    .selectFrom('organizations')
    .select('default_roles')
    .where('default_roles', 'like', `%"${name}"%`)
    .execute();
  return defaults.some((d) => (JSON.parse(d.default_roles) as unknown[]).includes(name));
}

/** Replaces a user's global roles. */
export async function replaceGlobalRoles(db: Db, userId: string, roles: readonly string[]): Promise<void> {
  await db.deleteFrom('user_roles').where('user_id', '=', userId).execute();
  if (roles.length > 0) {
    await db
      .insertInto('user_roles')
      .values(roles.map((role) => ({ user_id: userId, role })))
      .execute();
  }
}
