import type { Db } from '../../../platform/db/schema.ts';
import type { ScimGroupRow } from './scim.queries.ts';

// The SCIM groups of an organization and their members (docs/api.md §23).

export async function insertGroup(db: Db, row: ScimGroupRow): Promise<void> {
  await db.insertInto('scim_groups').values(row).execute();
}

export async function findGroup(db: Db, organizationId: string, id: string) {
  return db
    .selectFrom('scim_groups')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function updateGroup(
  db: Db,
  id: string,
  patch: Partial<Pick<ScimGroupRow, 'display_name' | 'external_id' | 'updated_at'>>,
): Promise<void> {
  await db.updateTable('scim_groups').set(patch).where('id', '=', id).execute();
}

export async function deleteGroup(db: Db, id: string): Promise<void> {
  await db.deleteFrom('scim_group_members').where('group_id', '=', id).execute();
  await db.deleteFrom('scim_groups').where('id', '=', id).execute();
}

/** A page of the organization's groups by displayName (one name when filtered), and the total. */
export async function pageGroups(
  db: Db,
  organizationId: string,
  displayName: string | null,
  limit: number,
  offset: number,
): Promise<{ rows: ScimGroupRow[]; total: number }> {
  let q = db.selectFrom('scim_groups').where('organization_id', '=', organizationId);
  if (displayName !== null) q = q.where('display_name', '=', displayName);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .selectAll()
    .orderBy('display_name')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
  return { rows, total: Number(total.n) };
}

/** The members of these groups (with their address for `display`), by group id. */
export async function membersOfGroups(db: Db, groupIds: readonly string[]) {
  const out = new Map<string, Array<{ id: string; email: string }>>();
  if (groupIds.length === 0) return out;
  const rows = await db
    .selectFrom('scim_group_members as g')
    .innerJoin('users as u', 'u.id', 'g.user_id')
    .select(['g.group_id', 'u.id', 'u.email'])
    .where('g.group_id', 'in', [...groupIds])
    .orderBy('u.id')
    .execute();
  for (const r of rows) out.set(r.group_id, [...(out.get(r.group_id) ?? []), { id: r.id, email: r.email }]);
  return out;
}

export async function addGroupMember(db: Db, groupId: string, userId: string): Promise<void> {
  await db
    .insertInto('scim_group_members')
    .values({ group_id: groupId, user_id: userId })
    .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing())
    .execute();
}

export async function removeGroupMember(db: Db, groupId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('scim_group_members')
    .where('group_id', '=', groupId)
    .where('user_id', '=', userId)
    .execute();
}

export async function clearGroupMembers(db: Db, groupId: string): Promise<void> {
  await db.deleteFrom('scim_group_members').where('group_id', '=', groupId).execute();
}

/** Removes the user from every group of the organization (the SCIM user is deleted). */
export async function leaveAllGroups(db: Db, organizationId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('scim_group_members')
    .where('user_id', '=', userId)
    .where('group_id', 'in', (eb) =>
      eb.selectFrom('scim_groups').select('id').where('organization_id', '=', organizationId),
    )
    .execute();
}

/** The displayNames of the organization's groups the user is in. */
export async function groupNamesOf(db: Db, organizationId: string, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('scim_group_members as m')
    .innerJoin('scim_groups as g', 'g.id', 'm.group_id')
    .select('g.display_name')
    .where('g.organization_id', '=', organizationId)
    .where('m.user_id', '=', userId)
    .execute();
  return rows.map((r) => r.display_name);
}

/** Every user in some group of the organization (for re-applying a changed role map). */
export async function groupedUserIds(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('scim_group_members as m')
    .innerJoin('scim_groups as g', 'g.id', 'm.group_id')
    .select('m.user_id')
    .distinct()
    .where('g.organization_id', '=', organizationId)
    .execute();
  return rows.map((r) => r.user_id);
}

/** Users whose SCIM row says groups added roles there (a changed map may take them away). */
export async function userIdsWithGroupRoles(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('scim_users')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('group_roles', '!=', '[]')
    .execute();
  return rows.map((r) => r.user_id);
}
