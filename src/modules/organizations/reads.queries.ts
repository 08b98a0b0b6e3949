import type { Db } from '../../platform/db/schema.ts';

/** The global roles of a user, by name. */
export async function selectGlobalRoles(db: Db, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('user_roles')
    .select('role')
    .where('user_id', '=', userId)
    .orderBy('role')
    .execute();
  return rows.map((r) => r.role);
}

export interface MembershipRow {
  id: string;
  slug: string;
  name: string;
  require_mfa: number;
  role: string | null;
}

/**
 * A user's memberships with their roles there: one row per (organization, role), or one row with
 * a null role for a member holding none. Ordered by organization id then role.
 */
export async function selectMemberships(
  db: Db,
  userId: string,
  organizationId?: string,
): Promise<MembershipRow[]> {
  let q = db
    .selectFrom('organization_members as m')
    .innerJoin('organizations as o', 'o.id', 'm.organization_id')
    .leftJoin('organization_member_roles as r', (j) =>
      j.onRef('r.organization_id', '=', 'm.organization_id').onRef('r.user_id', '=', 'm.user_id'),
    )
    .select(['o.id', 'o.slug', 'o.name', 'o.require_mfa', 'r.role'])
    .where('m.user_id', '=', userId);
  if (organizationId !== undefined) q = q.where('m.organization_id', '=', organizationId);
  return q.orderBy('o.id').orderBy('r.role').execute();
}

/** The catalogue's permission lists (JSON text) of these role names; unknown names are absent. */
export async function selectRolePermissions(db: Db, roles: readonly string[]): Promise<string[]> {
  if (roles.length === 0) return [];
  const rows = await db
    .selectFrom('roles')
    .select('permissions')
    .where('name', 'in', [...roles])
    .execute();
  return rows.map((r) => r.permissions);
}

/** Whether any of the user's roles in that organization grants the permission (JSON array text). */
export async function selectMemberRolePermissions(
  db: Db,
  organizationId: string,
  userId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_member_roles as r')
    .innerJoin('roles as c', 'c.name', 'r.role')
    .select('c.permissions')
    .where('r.organization_id', '=', organizationId)
    .where('r.user_id', '=', userId)
    .execute();
  return rows.map((r) => r.permissions);
}
