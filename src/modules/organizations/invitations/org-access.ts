import { type AuditEvent, type ClientInfo, recordAudits } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { isUniqueViolation } from '../../../platform/db/dialect.ts';
import type { Db, UserRow } from '../../../platform/db/schema.ts';
import { checkGrantable, orgAccess, requirePermission } from '../access.ts';
import type { Caller } from '../common.ts';
import { roleNotFound } from '../common.ts';
import { findMember, insertMember } from '../members.queries.ts';
import { lockOrganization } from '../organizations.queries.ts';
import { membershipIn, parseNames } from '../reads.ts';
import { existingRoleNames } from '../roles.queries.ts';
import type { InvitationWithOrganization } from './invitations.queries.ts';

/** The organization a caller acts in, and what they may do there. */
export interface OrgInviter {
  organization: { id: string; name: string; slug: string };
  /** Gatehouse's own admin: every organization, every role, no escalation rule. */
  admin: boolean;
  /** The caller's permissions in that organization (their roles there; global roles do not count). */
  permissions: ReadonlySet<string>;
}

/** The roles of an invitation, as stored (a JSON array of names). */
export function parseRoles(text: string): string[] {
  return parseNames(text);
}

/**
 * Who may act on an organization's invitations (docs/api.md §21): the module's one access check
 * (src/modules/organizations/access.ts: 404 `organization_not_found` for a non-member whatever ids
 * the request carries, 403 `mfa_required` in a `require_mfa` organization without a second
 * factor), then `permission` (403 `forbidden` without it; admins hold every one).
 */
export async function organizationAccess(
  ctx: AppContext,
  caller: Caller,
  organizationId: string,
  permission: string,
): Promise<OrgInviter> {
  const access = await orgAccess(ctx, organizationId, caller);
  requirePermission(access, permission);
  const { id, name, slug } = access.org;
  return { organization: { id, name, slug }, admin: access.admin, permissions: access.permissions };
}

/**
 * The escalation rule (docs/api.md §21), as for member_put: every role must exist (404
 * `role_not_found`), and a caller who is not an admin may hand out only roles whose every
 * permission they hold there (403 `forbidden`).
 */
export async function checkInvitedRoles(
  ctx: AppContext,
  access: OrgInviter,
  roles: readonly string[],
): Promise<void> {
  const known = await existingRoleNames(ctx.db, roles);
  const unknown = roles.find((r) => !known.has(r));
  if (unknown !== undefined) throw roleNotFound(unknown);
  await checkGrantable(ctx, ctx.db, access, roles);
}

/**
 * `data` of the invitation events (src/identity/events.ts maps the entry): the organization and the
 * invitation (never its token), and for an acceptance the person who joined (`user_id`).
 */
export function invitationEventData(
  organization: { id: string; slug: string; name: string },
  invitation: { id: string; email: string; roles: string[] },
  userId?: string,
): Record<string, unknown> {
  return {
    organization: { id: organization.id, slug: organization.slug, name: organization.name },
    invitation: { id: invitation.id, email: invitation.email, roles: invitation.roles },
    ...(userId !== undefined && { user_id: userId }),
  };
}

/** Whether the user is a member of the organization. */
export async function isMember(
  ctx: AppContext,
  db: Db,
  organizationId: string,
  userId: string,
): Promise<boolean> {
  return (await membershipIn(ctx, organizationId, userId, db)) !== null;
}

/**
 * Adds the invited person as a member with the invitation's roles, in the acceptance's transaction
 * (the module's own member write: `member_count` kept, a departure cleared), and writes `before`
 * (an account's creation, the acceptance) and `organization.member.added` in one statement. 409
 * `already_member` when they are one already (the transaction then rolls back and the invitation
 * stays usable).
 */
export async function addInvitedMember(
  trx: Db,
  invitation: InvitationWithOrganization,
  user: UserRow,
  client: ClientInfo,
  before: readonly AuditEvent[],
): Promise<{ roles: string[]; joinedAt: number }> {
  const roles = parseRoles(invitation.roles);
  // Roles deleted from the catalogue since the invitation was sent are not handed out.
  const known = await existingRoleNames(trx, roles);
  const kept = roles.filter((r) => known.has(r)).sort();
  const joinedAt = Date.now();
  const alreadyMember = () =>
    new ApiError('already_member', { detail: 'You are already a member of this organization' });
  // The organization's row is the lock of its member changes (as member_put takes it).
  await lockOrganization(trx, invitation.organization_id);
  if (await findMember(trx, invitation.organization_id, user.id)) throw alreadyMember();
  try {
    await insertMember(trx, invitation.organization_id, user.id, kept, joinedAt);
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyMember();
    throw err;
  }
  const organization = {
    id: invitation.organization_id,
    slug: invitation.organization_slug,
    name: invitation.organization_name,
  };
  await recordAudits(trx, [
    ...before,
    {
      action: 'organization.member.added',
      actor: { type: 'user', id: user.id },
      target: { type: 'organization', id: organization.id },
      client,
      // The events' mapper (src/identity/events.ts) reads `organization`, `user_id` and `roles`.
      details: {
        organization,
        user_id: user.id,
        roles: kept,
        via: 'invitation',
        invitation_id: invitation.id,
      },
    },
  ]);
  return { roles: kept, joinedAt };
}
