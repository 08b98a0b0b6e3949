import { sql } from 'kysely';
import type { Db } from '../../platform/db/schema.ts';

export interface MemberRow {
  user_id: string;
  joined_at: number;
}

export async function findMember(
  db: Db,
  organizationId: string,
  userId: string,
): Promise<MemberRow | undefined> {
  return db
    .selectFrom('organization_members')
    .select(['user_id', 'joined_at'])
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function memberRoles(db: Db, organizationId: string, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_member_roles')
    .select('role')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .orderBy('role')
    .execute();
  return rows.map((r) => r.role);
}

/** Adds a member with roles, keeps `member_count` in the same transaction, clears a departure. */
export async function insertMember(
  db: Db,
  organizationId: string,
  userId: string,
  roles: readonly string[],
  now: number,
): Promise<void> {
  await db
    .insertInto('organization_members')
    .values({ organization_id: organizationId, user_id: userId, joined_at: now })
    .execute();
  await setMemberRoles(db, organizationId, userId, roles);
  await db
    .updateTable('organizations')
    .set({ member_count: sql`member_count + 1` })
    .where('id', '=', organizationId)
    .execute();
  await db
    .deleteFrom('organization_departures')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .execute();
}

export async function setMemberRoles(
  db: Db,
  organizationId: string,
  userId: string,
  roles: readonly string[],
): Promise<void> {
  await db
    .deleteFrom('organization_member_roles')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .execute();
  if (roles.length > 0) {
    await db
      .insertInto('organization_member_roles')
      .values(roles.map((role) => ({ organization_id: organizationId, user_id: userId, role })))
      .execute();
  }
}

/**
 * Removes a member (their roles there cascade), keeps `member_count`, and records the departure so
 * joining by domain does not add them back. False when they were not a member.
 */
export async function removeMember(
  db: Db,
  organizationId: string,
  userId: string,
  now: number,
): Promise<boolean> {
  const r = await db
    .deleteFrom('organization_members')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) return false;
  await db
    .updateTable('organizations')
    .set({ member_count: sql`member_count - 1` })
    .where('id', '=', organizationId)
    .execute();
  await db
    .deleteFrom('organization_departures')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .execute();
  await db
    .insertInto('organization_departures')
    .values({ organization_id: organizationId, user_id: userId, left_at: now })
    .execute();
  return true;
}

/** The members holding a role whose permissions (JSON text) name `permission`, other than `exceptUserId`. */
export async function otherHolders(
  db: Db,
  organizationId: string,
  permission: string,
  exceptUserId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_member_roles as r')
    .innerJoin('roles as c', 'c.name', 'r.role')
    .select(['r.user_id', 'c.permissions'])
    .where('r.organization_id', '=', organizationId)
    .where('r.user_id', '!=', exceptUserId)
    .where('c.permissions', 'like', `%"${permission}"%`)
    .execute();
  return [
    ...new Set(
      rows.filter((r) => (JSON.parse(r.permissions) as unknown[]).includes(permission)).map((r) => r.user_id),
    ),
  ];
}

export interface MemberListRow {
  user_id: string;
  joined_at: number;
  email: string;
  name: string;
  status: string;
}

/** One page of an organization's members by (joined_at, user_id), after the cursor's position. */
export async function pageMembers(
  db: Db,
  organizationId: string,
  limit: number,
  after: { joinedAt: number; userId: string } | null,
): Promise<MemberListRow[]> {
  let q = db
    .selectFrom('organization_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'm.joined_at', 'u.email', 'u.name', 'u.status'])
    .where('m.organization_id', '=', organizationId);
  if (after !== null) {
    q = q.where((eb) =>
      eb.or([
        eb('m.joined_at', '>', after.joinedAt),
        eb.and([eb('m.joined_at', '=', after.joinedAt), eb('m.user_id', '>', after.userId)]),
      ]),
    );
  }
  return q.orderBy('m.joined_at').orderBy('m.user_id').limit(limit).execute();
}

/** The roles of these members there, by user id. */
export async function rolesOfMembers(
  db: Db,
  organizationId: string,
  userIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (userIds.length === 0) return out;
  const rows = await db
    .selectFrom('organization_member_roles')
    .select(['user_id', 'role'])
    .where('organization_id', '=', organizationId)
    .where('user_id', 'in', [...userIds])
    .orderBy('role')
    .execute();
  for (const r of rows) out.set(r.user_id, [...(out.get(r.user_id) ?? []), r.role]);
  return out;
}
