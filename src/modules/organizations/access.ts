import { amrHasSecondFactor } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { Db } from '../../platform/db/schema.ts';
import { type Caller, isAdmin, organizationNotFound } from './common.ts';
import { findOrganization, type OrganizationRow } from './organizations.queries.ts';
import { membershipIn, orgPermissionsOf, permissionsOf } from './reads.ts';

/** What a caller may do in one organization, decided on the server from the id in the path. */
export interface OrgAccess {
  org: OrganizationRow;
  admin: boolean;
  /** A member (an admin may not be one). */
  member: boolean;
  /** The caller's permissions there through their roles there (admins: none implied). */
  permissions: ReadonlySet<string>;
}

/**
 * The caller's access to the organization of `id`. An admin sees every organization; anyone else
 * only those they belong to — a non-member gets 404 `organization_not_found` exactly as for an id
 * that does not exist (no oracle, ASVS 8.4.1). A member acting in a `require_mfa` organization
 * without a second factor in the session gets 403 `mfa_required` (after the membership check: a
 * non-member learns nothing).
 */
export async function orgAccess(
  ctx: AppContext,
  id: string,
  caller: Caller,
  db: Db = ctx.db,
): Promise<OrgAccess> {
  const admin = isAdmin(caller);
  const org = await findOrganization(db, id);
  if (!org) throw organizationNotFound();
  const userId = caller.auth.user.id;
  const member = (await membershipIn(ctx, id, userId, db)) !== null;
  if (!admin && !member) throw organizationNotFound();
  if (!admin && org.require_mfa === 1 && !amrHasSecondFactor(caller.auth.claims.amr)) {
    throw new ApiError('mfa_required', {
      detail: 'This organization requires a second factor: sign in again with it (or add one first)',
    });
  }
  const permissions = member ? await orgPermissionsOf(ctx, id, userId, db) : new Set<string>();
  return { org, admin, member, permissions };
}

/** Admins, or members holding `permission` there; anyone else who may see it: 403 `forbidden`. */
export function requirePermission(access: OrgAccess, permission: string): void {
  if (access.admin || access.permissions.has(permission)) return;
  throw new ApiError('forbidden', { detail: `This needs the ${permission} permission in this organization` });
}

/**
 * The escalation guard (docs/api.md §21), for member_put and invitations alike: a caller who is not
 * an admin hands out only roles whose every permission they hold in this organization (their global
 * roles do not count here); else 403 `forbidden`.
 */
export async function checkGrantable(
  ctx: AppContext,
  db: Db,
  access: Pick<OrgAccess, 'admin' | 'permissions'>,
  roles: readonly string[],
): Promise<void> {
  if (access.admin) return;
  for (const role of roles) {
    const needs = await permissionsOf(ctx, [role], db);
    if (needs.some((p) => !access.permissions.has(p))) {
      throw new ApiError('forbidden', {
        detail: `The role ${role} grants permissions you do not hold in this organization`,
      });
    }
  }
}
