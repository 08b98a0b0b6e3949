import type { Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../context.ts';
import type { DB, UserRow } from '../../db/schema.ts';
import type { ClientInfo } from '../../identity/index.ts';
import { findUserById, recordAudit } from '../../identity/index.ts';
import { renderInvitationMail } from '../../mail/templates.ts';
import { hashOpaqueToken, newOpaqueToken } from '../../security/opaque-tokens.ts';
import {
  findLatestInvitation,
  type InvitationRow,
  insertInvitation,
  replacePendingInvitations,
} from './invitations.queries.ts';
import { inviteUrl } from './invitations.service.ts';

/**
 * Sends an invited user a fresh invitation, in the caller's transaction, as a re-invite does: the
 * pending invitation dies (its waiting mail is withdrawn), a new one with the same role and inviter
 * is written with its mail. Used by forgot-password on an `invited` address (docs/api.md §11).
 */
export async function resendInvitation(
  ctx: AppContext,
  trx: Transaction<DB>,
  user: UserRow,
  client: ClientInfo,
  via: string,
): Promise<void> {
  const now = Date.now();
  const previous = await findLatestInvitation(trx, user.id);
  const replaced = await replacePendingInvitations(trx, user.id, now);
  await ctx.mail.outbox.withdraw(trx, user.email, 'invitation');
  const inviter = previous?.invited_by ? await findUserById(trx, previous.invited_by) : undefined;
  const token = newOpaqueToken();
  const invitation: InvitationRow = {
    id: uuidv7(),
    user_id: user.id,
    email: user.email,
    role: previous?.role ?? user.role,
    token_hash: hashOpaqueToken(token),
    invited_by: inviter?.id ?? null,
    created_at: now,
    expires_at: now + ctx.config.invitationTtlS * 1000,
    consumed_at: null,
    replaced_at: null,
  };
  await insertInvitation(trx, invitation);
  await ctx.mail.outbox.enqueue(
    trx,
    renderInvitationMail({
      to: user.email,
      inviterName: inviter?.name.trim() || null,
      inviteUrl: inviteUrl(ctx.config.inviteUrlTemplate, token),
      expiresAt: new Date(invitation.expires_at),
      productName: ctx.config.appName,
    }),
    'invitation',
  );
  await recordAudit(trx, {
    action: 'invitation.send',
    actor: { type: 'anonymous' },
    target: { type: 'invitation', id: invitation.id },
    client,
    details: { user_id: user.id, role: invitation.role, replaced: replaced > 0, resent: true, via },
  });
}
