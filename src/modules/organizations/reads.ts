import type { AppContext } from '../../kernel/context.types.ts';
import type { Db } from '../../platform/db/schema.ts';
import {
  type MembershipRow,
  selectGlobalRoles,
  selectMemberRolePermissions,
  selectMemberships,
  selectRolePermissions,
} from './reads.queries.ts';

/** A user's membership of one organization, as other features read it (docs/api.md §21). */
export interface OrgMembership {
  id: string;
  slug: string;
  name: string;
  roles: string[];
  require_mfa: boolean;
}

/** Folds (organization, role) rows, already ordered by organization, into memberships. */
function fold(rows: readonly MembershipRow[]): OrgMembership[] {
  const out: OrgMembership[] = [];
  for (const row of rows) {
    let last = out[out.length - 1];
    if (last?.id !== row.id) {
      last = { id: row.id, slug: row.slug, name: row.name, roles: [], require_mfa: row.require_mfa === 1 };
      out.push(last);
    }
    if (row.role !== null) last.roles.push(row.role);
  }
  return out;
}

/** Parses a stored JSON array of names; anything else stored gives nothing. */
export function parseNames(text: string): string[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The roles the user holds globally (outside any organization), sorted. */
export function globalRolesOf(ctx: AppContext, userId: string, db: Db = ctx.db): Promise<string[]> {
  return selectGlobalRoles(db, userId);
}

/** Every organization the user belongs to, with their roles there (ordered by organization id). */
export async function membershipsOf(
  ctx: AppContext,
  userId: string,
  db: Db = ctx.db,
): Promise<OrgMembership[]> {
  return fold(await selectMemberships(db, userId));
}

/** The user's membership of that organization, or null when they are not a member. */
export async function membershipIn(
  ctx: AppContext,
  organizationId: string,
  userId: string,
  db: Db = ctx.db,
): Promise<OrgMembership | null> {
  return fold(await selectMemberships(db, userId, organizationId))[0] ?? null;
}

/** Union of the catalogue's permissions of these role names (unknown names give nothing), sorted. */
export async function permissionsOf(
  ctx: AppContext,
  roles: readonly string[],
  db: Db = ctx.db,
): Promise<string[]> {
  const lists = await selectRolePermissions(db, [...new Set(roles)]);
  return [...new Set(lists.flatMap(parseNames))].sort();
}

/** The permissions the user holds in that organization through their roles there (none when not a member). */
export async function orgPermissionsOf(
  ctx: AppContext,
  organizationId: string,
  userId: string,
  db: Db = ctx.db,
): Promise<Set<string>> {
  const lists = await selectMemberRolePermissions(db, organizationId, userId);
  return new Set(lists.flatMap(parseNames));
}

/** Does this user hold `permission` in that organization (roles there only; admins are NOT implied). */
export async function holdsPermission(
  ctx: AppContext,
  organizationId: string,
  userId: string,
  permission: string,
  db: Db = ctx.db,
): Promise<boolean> {
  return (await orgPermissionsOf(ctx, organizationId, userId, db)).has(permission);
}
