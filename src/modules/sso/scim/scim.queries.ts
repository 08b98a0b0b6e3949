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
