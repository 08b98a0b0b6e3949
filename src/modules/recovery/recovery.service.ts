import { reserveAttempt, reserveOrThrow } from '../../identity/budgets/attempt-budget.ts';
import { deleteCountersBefore } from '../../identity/budgets/throttle.queries.ts';
import { clearAccountCounters } from '../../identity/budgets/throttle.ts';
import {
  type ClientInfo,
  findUserByEmail,
  findUserById,
  iso,
  normalizeEmail,
  proveMailbox,
  recordAudit,
  revokeUserSessions,
  secondFactors,
  toPublicUser,
} from '../../identity/index.ts';
import { forgotBudget, mailBudget } from '../../identity/links/budgets.ts';
import { endOutstandingLinks } from '../../identity/links/credential-events.ts';
import { deleteLinksExpiredBefore } from '../../identity/links/one-time-links.queries.ts';
import { consumeLink, linkInvalid, peekLinkReserved } from '../../identity/links/one-time-links.ts';
import { checkPasswordPolicy } from '../../identity/passwords/password-policy.ts';
import { afterAnswer } from '../../kernel/after-answer.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { mailLanguage } from '../../platform/mail/mail-language.ts';
import { enqueueNotice } from '../../platform/mail/notices.ts';
import { resendInvitation } from '../invitations/index.ts';
import { prepareResetFactor, refuseUnservedResetFactor } from '../mfa/index.ts';
import type { MessageResponse, ResetBody, ResetView, UserEnvelope } from './recovery.schemas.ts';
import { mailResetLink } from './reset-links.ts';

/** The one answer of forgot-password, whatever the address (docs/api.md §11). */
export const FORGOT_MESSAGE =
  'If an account exists for this address, we have sent a link to reset its password.';

/**
 * POST /password/forgot. The client's budget comes first (429 before the 202). Then every path —
 * unknown, active, invited, disabled, over the address's mail budget — does the same work before the
 * answer: one lookup, then one transaction that reserves the address's mail budget and writes an
 * audit entry. Only an active account (or an invited one, whose invitation is re-sent) also gets a
 * link and a mail, in a transaction of their own started after the answer (kernel/after-answer.ts):
 * done before it, that work made a known address answer about a millisecond slower than an unknown
 * one. The answer is the same body either way.
 */
export async function forgotPassword(
  ctx: AppContext,
  rawEmail: string,
  client: ClientInfo,
): Promise<MessageResponse> {
  await reserveOrThrow(
    ctx.db,
    [forgotBudget(client.ip)],
    'Too many password reset requests from this address; try again later',
  );
  const email = emailOr400(rawEmail);
  const user = await findUserByEmail(ctx.db, email);
  // docs/api.md §23 sso_required: refused before any mail is sent or budget spent.
  await ctx.signIn.checkAddress(ctx.db, { email, user });
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    const budget = await reserveAttempt(trx, [mailBudget(email)]);
    let outcome: string;
    if (!user) outcome = 'no_account';
    else if (!budget.ok) outcome = 'over_mail_budget';
    else if (user.status === 'active') outcome = 'link_sent';
    else if (user.status === 'invited' && ctx.modules.isEnabled('invitations')) outcome = 'invitation_resent';
    else outcome = `not_sent_${user.status}`;
    await recordAudit(trx, {
      action: 'password.forgot',
      actor: { type: 'anonymous' },
      target: user ? { type: 'user', id: user.id } : null,
      client,
      details: { email, outcome },
    });
    return outcome;
  });
  if (user && (outcome === 'link_sent' || outcome === 'invitation_resent')) {
    afterAnswer(ctx, 'password.forgot', async () => {
      await ctx.db.transaction().execute(async (trx) => {
        // The account as it is now: changed in between (disabled, another address), it gets nothing.
        const now = await findUserById(trx, user.id);
        if (!now || now.email !== user.email || now.status !== user.status) return;
        if (now.status === 'active') await mailResetLink(ctx, trx, now, client.language);
        else await resendInvitation(ctx, trx, now, client, 'password_forgot');
      });
      ctx.mail.outbox.nudge();
    });
  }
  return { message: FORGOT_MESSAGE };
}

/**
 * GET /password/reset/<token>: what the link is for, and which second factors the reset will ask for
 * (`methods`, as the reset's own 403 lists them: a page offers the code field or the passkey before
 * the first submit). Reads only (mail scanners open links).
 */
export async function viewResetLink(ctx: AppContext, token: string, client: ClientInfo): Promise<ResetView> {
  const { link, user } = await peekLinkReserved(ctx.db, token, ['password_reset'], client.ip);
  // The same "which factors does this user have?" that login asks (empty while `mfa` is off).
  const methods = await secondFactors(ctx, ctx.db, user.id);
  return { email: user.email, expires_at: iso(link.expires_at), mfa_required: methods.length > 0, methods };
}

/**
 * POST /password/reset/<token>. A weak password (422) leaves the link usable. On success, in one
 * transaction: the link used up (exactly one of concurrent uses wins), the new hash and
 * `email_verified`, every session revoked, every other live link and mfa_token ended (§16), the account's failed
 * logins cleared (from every client address), an audit entry and the "password changed" notice.
 */
export async function resetPassword(
  ctx: AppContext,
  token: string,
  input: ResetBody,
  client: ClientInfo,
): Promise<UserEnvelope> {
  refuseUnservedResetFactor(ctx, input);
  const { link, user } = await peekLinkReserved(ctx.db, token, ['password_reset'], client.ip);
  // docs/api.md §23 sso_required: before anything is hashed or consumed (the link stays as it was).
  await ctx.signIn.checkAddress(ctx.db, { email: user.email, user });
  const policy = checkPasswordPolicy(input.password, {
    minLength: ctx.config.passwordMinLength,
    breachedCheck: ctx.config.passwordBreachedCheck,
    email: user.email,
  });
  if (!policy.ok) throw new ApiError('weak_password', { detail: policy.reason });

  // ── Second factor (docs/api.md §11) ──────────────────────────────────────────────────────────────
  // Before anything is hashed or consumed: when `user` has a factor, neither `mfa_code` nor
  // `passkey` → 403 `mfa_required` (no mfa_token: the link is the proof); the attempt is reserved
  // against the account's login throttle first, and the factor is spent inside the reset's
  // transaction, so a wrong one (401 `mfa_code_invalid` / `passkey_invalid`) rolls the whole reset
  // back and the link stays usable.
  const factor = await prepareResetFactor(
    ctx,
    user,
    { mfa_code: input.mfa_code, passkey: input.passkey },
    client,
  );

  const passwordHash = await ctx.passwords.hash(input.password);
  const updated = await ctx.db.transaction().execute(async (trx): Promise<UserRow> => {
    const now = Date.now();
    await consumeLink(trx, link, now);
    await factor?.spend(trx);
    // Disabled or re-addressed since the link was opened: the link died with that change.
    if (!(await proveMailbox(trx, user.id, link.email, now, passwordHash))) throw linkInvalid();
    const sessionsRevoked = await revokeUserSessions(trx, user.id, 'password_reset');
    // docs/api.md §16: every other live link and every outstanding mfa_token of the user ends here.
    await endOutstandingLinks(trx, user.id, now);
    await clearAccountCounters(trx, user.email);
    await recordAudit(trx, {
      action: 'password.reset',
      actor: { type: 'user', id: user.id },
      target: { type: 'user', id: user.id },
      client,
      details: {
        link_id: link.id,
        sessions_revoked: sessionsRevoked,
        ...(factor && { second_factor: factor.method }),
      },
    });
    await enqueueNotice(
      trx,
      { outbox: ctx.mail.outbox, appName: ctx.config.appName },
      'password_changed',
      user.email,
      {},
      mailLanguage(ctx.languages, user.locale, client.language),
    );
    const after = await findUserById(trx, user.id);
    if (!after) throw linkInvalid();
    return after;
  });
  await factor?.settle();
  ctx.mail.outbox.nudge();
  return { user: toPublicUser(updated) };
}

/** A body e-mail that normalizes, or 400 `validation_failed` (its shape says nothing about accounts). */
export function emailOr400(raw: string, path = '/email'): string {
  const email = normalizeEmail(raw);
  if (email === null) {
    throw new ApiError('validation_failed', {
      detail: `body${path} must be a valid email address`,
      errors: [{ path, message: 'must be a valid email address' }],
    });
  }
  return email;
}

const HOUR_MS = 3_600_000;
// The hourly budgets of src/identity/links/budgets.ts; login's own counters are pruned by the auth module.
const BUDGET_PREFIXES = ['mail:', 'forgot:', 'signup:', 'verify:', 'link:'];
// Used and dead links are kept a week past their expiry, for investigations; then deleted.
const LINK_KEEP_MS = 7 * 24 * HOUR_MS;

/** Housekeeping of the mailed-link flows (the `recovery.prune` job): spent hourly budgets and long-expired links. */
export async function pruneLinksAndBudgets(ctx: AppContext, now = Date.now()): Promise<void> {
  for (const prefix of BUDGET_PREFIXES) await deleteCountersBefore(ctx.db, now - HOUR_MS, prefix);
  await deleteLinksExpiredBefore(ctx.db, now - LINK_KEEP_MS);
}
