import { v7 as uuidv7 } from 'uuid';
import { reserveOrThrow } from '../../../identity/budgets/attempt-budget.ts';
import { findUserByEmail, iso, normalizeEmail, recordAudit } from '../../../identity/index.ts';
import { linkUrl } from '../../../identity/links/one-time-links.ts';
import { hashOpaqueToken, newOpaqueToken } from '../../../identity/tokens/opaque-tokens.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { mailLanguage } from '../../../platform/mail/mail-language.ts';
import type { Caller } from '../common.ts';
import { renderOrganizationInvitationMail } from './invitation-mail.ts';
import {
  insertOrgInvitation,
  listPendingInvitations,
  replacePendingInvitations,
  revokeInvitation,
} from './invitations.queries.ts';
import type { OrgInvitationList, OrgInviteBody, OrgInviteResponse } from './invitations.schemas.ts';
import {
  checkInvitedRoles,
  invitationEventData,
  isMember,
  organizationAccess,
  parseRoles,
} from './org-access.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** docs/api.md §21: at most 100 invitations a day per organization (429 beyond). */
export const INVITATIONS_PER_DAY = 100;

/** The mail kind of one organization's invitations: a re-invite withdraws only that organization's. */
export function invitationMailKind(organizationId: string): string {
  return `organization_invitation.${organizationId}`;
}

/**
 * Invites an address to an organization (docs/api.md §21): an admin, or a member holding
 * `org:members:manage` who may hand out only roles whose every permission they hold there. In one
 * transaction: the organization's daily budget is reserved first (a refusal below gives it back by
 * rolling back), a member is refused (409 `already_member`), the address's pending invitation is
 * replaced, the new one stored with only its token's hash, its one mail queued and the change
 * audited (`organization.invitation.created`, never the token).
 */
export async function inviteToOrganization(
  ctx: AppContext,
  caller: Caller,
  organizationId: string,
  input: OrgInviteBody,
): Promise<OrgInviteResponse> {
  const email = normalizeEmail(input.email);
  if (email === null) {
    throw new ApiError('validation_failed', {
      detail: 'body/email must be a valid email address',
      errors: [{ path: '/email', message: 'must be a valid email address' }],
    });
  }
  const access = await organizationAccess(ctx, caller, organizationId, 'org:members:manage');
  const roles = [...input.roles];
  await checkInvitedRoles(ctx, access, roles);
  const { organization } = access;
  const result = await ctx.db.transaction().execute(async (trx) => {
    const now = Date.now();
    await reserveOrThrow(
      trx,
      [{ key: `org:invite:${organization.id}`, limit: INVITATIONS_PER_DAY, windowMs: DAY_MS }],
      `At most ${INVITATIONS_PER_DAY} invitations a day per organization; try again later`,
    );
    const existing = await findUserByEmail(trx, email);
    if (existing && (await isMember(ctx, trx, organization.id, existing.id))) {
      throw new ApiError('already_member', {
        detail: 'This address belongs to a member of the organization',
      });
    }
    const replaced = await replacePendingInvitations(trx, organization.id, email);
    // An older mail still waiting (SMTP down) would only deliver a dead link.
    await ctx.mail.outbox.withdraw(trx, email, invitationMailKind(organization.id));
    const token = newOpaqueToken();
    const row = {
      id: uuidv7(),
      organization_id: organization.id,
      email,
      roles: JSON.stringify(roles),
      token_hash: hashOpaqueToken(token),
      status: 'pending' as const,
      expires_at: now + ctx.config.invitationTtlS * 1000,
      created_by: caller.auth.user.id,
      created_at: now,
      used_at: null,
    };
    await insertOrgInvitation(trx, row);
    const url = linkUrl(ctx.config.orgInviteUrlTemplate, token);
    await ctx.mail.outbox.enqueue(
      trx,
      renderOrganizationInvitationMail({
        to: email,
        organizationName: organization.name,
        inviterName: caller.auth.user.name.trim() || null,
        joinUrl: url,
        expiresAt: new Date(row.expires_at),
        productName: ctx.config.appName,
        // The invitee's locale when the address has an account, else the inviting request's
        // language (API §24).
        language: mailLanguage(ctx.languages, existing?.locale, caller.client?.language),
      }),
      invitationMailKind(organization.id),
    );
    await recordAudit(trx, {
      action: 'organization.invitation.created',
      actor: caller.actor,
      target: { type: 'organization', id: organization.id },
      client: caller.client,
      details: { ...invitationEventData(organization, { id: row.id, email, roles }), replaced: replaced > 0 },
    });
    return { row, url };
  });
  ctx.mail.outbox.nudge();
  const { row, url } = result;
  return {
    id: row.id,
    email: row.email,
    roles,
    expires_at: iso(row.expires_at),
    // A manager's invitation goes only by mail: the link reaches only the invited address.
    ...(access.admin ? { invite_url: url } : {}),
  };
}

/** The organization's pending invitations (admin or `org:members:manage`): never a token or URL. */
export async function organizationInvitations(
  ctx: AppContext,
  caller: Caller,
  organizationId: string,
): Promise<OrgInvitationList> {
  const { organization } = await organizationAccess(ctx, caller, organizationId, 'org:members:manage');
  const rows = await listPendingInvitations(ctx.db, organization.id, Date.now());
  return {
    data: rows.map((r) => ({
      id: r.id,
      email: r.email,
      roles: parseRoles(r.roles),
      expires_at: iso(r.expires_at),
      created_at: iso(r.created_at),
      invited_by: r.created_by === null ? null : { id: r.created_by, name: r.inviter_name ?? '' },
    })),
  };
}

/**
 * Revokes a pending invitation (its token then answers 410 `invitation_used`). An id that is not a
 * pending invitation of this organization — another organization's included — is 404.
 */
export async function deleteOrganizationInvitation(
  ctx: AppContext,
  caller: Caller,
  organizationId: string,
  invitationId: string,
): Promise<void> {
  const { organization } = await organizationAccess(ctx, caller, organizationId, 'org:members:manage');
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await revokeInvitation(trx, organization.id, invitationId))) {
      throw new ApiError('invitation_not_found', {
        detail: 'This organization has no such pending invitation',
      });
    }
    await recordAudit(trx, {
      action: 'organization.invitation.revoked',
      actor: caller.actor,
      target: { type: 'organization', id: organization.id },
      client: caller.client,
      details: { invitation_id: invitationId },
    });
  });
}
