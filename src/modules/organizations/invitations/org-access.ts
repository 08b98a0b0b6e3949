import type { AuthContext } from '../../../http/guard.ts';
import { type AuditEvent, type ClientInfo, isMultiFactor, recordAudits } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { Db, UserRow } from '../../../platform/db/schema.ts';
import { membershipIn, orgPermissionsOf, parseNames, permissionsOf } from '../reads.ts';
import {
  findOrganizationById,
  type InvitationWithOrganization,
  insertInvitedMember,
  knownRoleNames,
} from './invitations.queries.ts';

/** The organization a caller acts in, and what they may do there. */
export interface OrgAccess {
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

function notFound(): ApiError {
  return new ApiError('organization_not_found', { detail: 'No such organization' });
}

/**
 * Who may act in an organization (docs/api.md §21): an admin; or a member holding `permission`
 * there (403 `forbidden` without it), with a second factor in the session when the organization
 * requires one (403 `mfa_required`). Anyone else — whatever ids the request carries — gets 404
 * `organization_not_found`, the same as for an organization that does not exist (no oracle).
 */
export async function organizationAccess(
  ctx: AppContext,
  caller: AuthContext,
  organizationId: string,
  permission: string,
): Promise<OrgAccess> {
  const org = await findOrganizationById(ctx.db, organizationId);
  if (!org) throw notFound();
  const organization = { id: org.id, name: org.name, slug: org.slug };
  if (caller.user.role === 'admin') return { organization, admin: true, permissions: new Set() };
  const membership = await membershipIn(ctx, org.id, caller.user.id);
  if (membership === null) throw notFound();
  if (membership.require_mfa && !isMultiFactor(caller.claims.amr)) {
    throw new ApiError('mfa_required', {
      detail: 'This organization requires a second factor: sign in again with it (or set one up)',
    });
  }
  const permissions = await orgPermissionsOf(ctx, org.id, caller.user.id);
  if (!permissions.has(permission)) {
    throw new ApiError('forbidden', {
      detail: `This needs the ${permission} permission in the organization`,
    });
  }
  return { organization, admin: false, permissions };
}

/**
 * The escalation rule (docs/api.md §21): every role must exist (404 `role_not_found`), and a caller
 * who is not an admin may hand out only roles whose every permission they hold there (403).
 */
export async function checkGrantable(
  ctx: AppContext,
  access: OrgAccess,
  roles: readonly string[],
): Promise<void> {
  const known = await knownRoleNames(ctx.db, roles);
  const unknown = roles.find((r) => !known.has(r));
  if (unknown !== undefined) throw new ApiError('role_not_found', { detail: `No role is named ${unknown}` });
  if (access.admin) return;
  const granted = await permissionsOf(ctx, roles);
  const beyond = granted.find((p) => !access.permissions.has(p));
  if (beyond !== undefined) {
    throw new ApiError('forbidden', {
      detail: `You may hand out only roles whose permissions you hold here (not ${beyond})`,
    });
  }
}

/** `data` of the invitation events: the organization and the invitation (never its token). */
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
 * Adds the invited person as a member with the invitation's roles, in the acceptance's transaction,
 * and writes `before` (the acceptance, an account's creation) and `organization.member.added` in
 * one statement. 409 `already_member` when they joined meanwhile (the transaction then rolls back
 * and the invitation stays usable).
 */
export async function addInvitedMember(
  _ctx: AppContext,
  trx: Db,
  invitation: InvitationWithOrganization,
  user: UserRow,
  client: ClientInfo,
  before: readonly AuditEvent[],
): Promise<{ roles: string[]; joinedAt: number }> {
  const roles = parseRoles(invitation.roles);
  // Roles deleted from the catalogue since the invitation was sent are not handed out.
  const known = await knownRoleNames(trx, roles);
  const kept = roles.filter((r) => known.has(r));
  const joinedAt = Date.now();
  if (!(await insertInvitedMember(trx, invitation.organization_id, user.id, kept, joinedAt))) {
    throw new ApiError('already_member', { detail: 'You are already a member of this organization' });
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
