import type { Selectable } from 'kysely';
import type { Db, ScimGroupsTable, ScimUsersTable } from '../../../platform/db/schema.ts';

export type ScimUserRow = Selectable<ScimUsersTable>;
export type ScimGroupRow = Selectable<ScimGroupsTable>;

// ——— tokens ———

/** Keeps one token per organization: the new one replaces the previous. */
export async function replaceToken(
  db: Db,
  organizationId: string,
  hash: string,
  prefix: string,
  now: number,
) {
  await db.deleteFrom('scim_tokens').where('organization_id', '=', organizationId).execute();
  await db
    .insertInto('scim_tokens')
    .values({ organization_id: organizationId, token_hash: hash, prefix, created_at: now })
    .execute();
}

export async function deleteToken(db: Db, organizationId: string): Promise<boolean> {
  const r = await db
    .deleteFrom('scim_tokens')
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The token row of this hash (unique index), if any. */
export async function tokenByHash(db: Db, hash: string) {
  return db
    .selectFrom('scim_tokens')
    .select(['organization_id', 'token_hash'])
    .where('token_hash', '=', hash)
    .executeTakeFirst();
}

// ——— users ———

export async function findScimUser(db: Db, organizationId: string, userId: string) {
  return db
    .selectFrom('scim_users')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function insertScimUser(db: Db, row: ScimUserRow): Promise<void> {
  await db.insertInto('scim_users').values(row).execute();
}

export async function updateScimUser(
  db: Db,
  organizationId: string,
  userId: string,
  patch: Partial<Omit<ScimUserRow, 'organization_id' | 'user_id'>>,
): Promise<void> {
  await db
    .updateTable('scim_users')
    .set(patch)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteScimUser(db: Db, organizationId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('scim_users')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .execute();
}

/** Whether the user is a member there now. */
export async function isMember(db: Db, organizationId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('organization_members')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Users known to SCIM there by externalId. */
export async function userIdsByExternalId(db: Db, organizationId: string, externalId: string) {
  const rows = await db
    .selectFrom('scim_users')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('external_id', '=', externalId)
    .orderBy('user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

/** How many members the organization has (kept by a trigger) and how many deactivated SCIM users. */
export async function countVisible(
  db: Db,
  organizationId: string,
): Promise<{ members: number; inactive: number }> {
  const org = await db
    .selectFrom('organizations')
    .select('member_count')
    .where('id', '=', organizationId)
    .executeTakeFirst();
  const inactive = await db
    .selectFrom('scim_users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('active', '=', 0)
    .executeTakeFirstOrThrow();
  return { members: Number(org?.member_count ?? 0), inactive: Number(inactive.n) };
}

/** A page of the organization's members by user id (the primary key's order). */
export async function pageMemberIds(db: Db, organizationId: string, limit: number, offset: number) {
  const rows = await db
    .selectFrom('organization_members')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .orderBy('user_id')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map((r) => r.user_id);
}

/** A page of the deactivated SCIM users there, by user id. */
export async function pageInactiveIds(db: Db, organizationId: string, limit: number, offset: number) {
  const rows = await db
    .selectFrom('scim_users')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('active', '=', 0)
    .orderBy('user_id')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map((r) => r.user_id);
}

/** The rows a SCIM User is made of, for these ids (users, their SCIM row there, membership). */
export async function userViews(db: Db, organizationId: string, userIds: readonly string[]) {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('users as u')
    .leftJoin('scim_users as s', (j) =>
      j.onRef('s.user_id', '=', 'u.id').on('s.organization_id', '=', organizationId),
    )
    .leftJoin('organization_members as m', (j) =>
      j.onRef('m.user_id', '=', 'u.id').on('m.organization_id', '=', organizationId),
    )
    .select([
      'u.id',
      'u.email',
      'u.name',
      'u.status',
      'u.created_at',
      'u.updated_at',
      's.external_id',
      's.updated_at as scim_updated_at',
      'm.joined_at',
    ])
    .where('u.id', 'in', [...userIds])
    .execute();
}
export type UserView = Awaited<ReturnType<typeof userViews>>[number];

/** The live sessions of the user whose OAuth grant acts in the organization (`org_id`). */
export async function sessionsCarrying(db: Db, organizationId: string, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('sessions as s')
    .innerJoin('oauth_grant_organizations as g', 'g.grant_id', 's.id')
    .select('s.id')
    .where('g.organization_id', '=', organizationId)
    .where('s.user_id', '=', userId)
    .where('s.revoked_at', 'is', null)
    .execute();
  return rows.map((r) => r.id);
}

// ——— groups ———

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
