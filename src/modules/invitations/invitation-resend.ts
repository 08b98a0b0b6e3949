import type { Transaction } from 'kysely';
import type { ClientInfo } from '../../identity/index.ts';
import { findUserById, recordAudit } from '../../identity/index.ts';
import { issueLink, linkUrl } from '../../identity/links/one-time-links.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { DB, UserRow } from '../../platform/db/schema.ts';
import { renderInvitationMail } from '../../platform/mail/templates.ts';
import { findLatestInvitation, insertInvitation } from './invitations.queries.ts';

/**
 * Sends an invited user a fresh invitation, in the caller's transaction, as a re-invite does: the
 * pending invitation's link dies (its waiting mail is withdrawn), a new one with the same role and
 * inviter is issued with its mail. Used by forgot-password on an `invited` address (docs/api.md §11).
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
  await ctx.mail.outbox.withdraw(trx, user.email, 'invitation');
  const inviter = previous?.invited_by ? await findUserById(trx, previous.invited_by) : undefined;
  const role = previous?.role ?? user.role;
  const { token, link, replaced } = await issueLink(trx, {
    userId: user.id,
    purpose: 'invitation',
    email: user.email,
    ttlS: ctx.config.invitationTtlS,
    now,
  });
  await insertInvitation(trx, { id: link.id, role, invited_by: inviter?.id ?? null });
  await ctx.mail.outbox.enqueue(
    trx,
    renderInvitationMail({
      to: user.email,
      inviterName: inviter?.name.trim() || null,
      inviteUrl: linkUrl(ctx.config.inviteUrlTemplate, token),
      expiresAt: new Date(link.expires_at),
      productName: ctx.config.appName,
    }),
    'invitation',
  );
  await recordAudit(trx, {
    action: 'invitation.send',
    actor: { type: 'anonymous' },
    target: { type: 'invitation', id: link.id },
    client,
    details: { user_id: user.id, role, replaced: replaced > 0, resent: true, via },
  });
}
