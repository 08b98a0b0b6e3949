import type { ClientInfo } from '../../identity/index.ts';
import {
  findUserByEmail,
  findUserById,
  iso,
  normalizeEmail,
  recordAudit,
  refuseServiceAccount,
} from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { parseUserId } from '../users/index.ts';
import type { ExpiresResponse } from './recovery.schemas.ts';
import { issueResetLink, mailResetLink } from './reset-links.ts';

function notActive(): ApiError {
  return new ApiError('forbidden', {
    detail: 'Only an active account can be sent a recovery link (an invited one: re-invite it)',
  });
}

/**
 * POST /users/<id>/password-reset (admin): mails the user a recovery link, which the admin never
 * sees. Not counted against the address's mail budget: an admin asked for it, and is audited.
 */
export async function adminSendResetLink(
  ctx: AppContext,
  admin: UserRow,
  rawId: string,
  client: ClientInfo,
): Promise<ExpiresResponse> {
  const id = parseUserId(rawId);
  const user = id === null ? undefined : await findUserById(ctx.db, id);
  if (!user) throw new ApiError('not_found', { detail: 'No such user' });
  refuseServiceAccount(user, 'password');
  if (user.status !== 'active') throw notActive();
  const expiresAt = await ctx.db.transaction().execute(async (trx) => {
    const issued = await mailResetLink(ctx, trx, user);
    await recordAudit(trx, {
      action: 'password.reset_link',
      actor: { type: 'user', id: admin.id },
      target: { type: 'user', id: user.id },
      client,
      details: { via: 'api', mailed: true },
    });
    return issued.expiresAt;
  });
  ctx.mail.outbox.nudge();
  return { expires_at: iso(expiresAt) };
}

/** `gatehouse users reset-link --email E`: a recovery link for an operator on the server (no mail). */
export async function cliResetLink(
  ctx: AppContext,
  rawEmail: string,
): Promise<{ url: string; expiresAt: string }> {
  const email = normalizeEmail(rawEmail);
  const user = email === null ? undefined : await findUserByEmail(ctx.db, email);
  if (!user) throw new Error(`no user has the address ${rawEmail}`);
  if (user.status !== 'active') throw new Error(`the account ${user.email} is ${user.status}, not active`);
  const issued = await ctx.db.transaction().execute(async (trx) => {
    const link = await issueResetLink(ctx, trx, user);
    await recordAudit(trx, {
      action: 'password.reset_link',
      actor: { type: 'system' },
      target: { type: 'user', id: user.id },
      details: { via: 'cli', mailed: false },
    });
    return link;
  });
  return { url: issued.url, expiresAt: iso(issued.expiresAt) };
}
