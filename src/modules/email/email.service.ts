import { reserveAttempt, reserveOrThrow } from '../../identity/budgets/attempt-budget.ts';
import { checkPasswordReserved, wrongPassword } from '../../identity/budgets/password-attempt.ts';
import {
  type ClientInfo,
  type FreshProof,
  findUserByEmail,
  findUserById,
  iso,
  proveMailbox,
  recordAudit,
  requireFreshProof,
  revokeUserSessions,
  switchEmail,
  toPublicUser,
} from '../../identity/index.ts';
import { mailBudget, verificationBudgets } from '../../identity/links/budgets.ts';
import { endOutstandingLinks } from '../../identity/links/credential-events.ts';
import {
  consumeLink,
  issueLink,
  linkInvalid,
  linkUrl,
  peekLinkReserved,
} from '../../identity/links/one-time-links.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { isUniqueViolation } from '../../platform/db/dialect.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { type LinkMailKind, renderLinkMail } from '../../platform/mail/link-mails.ts';
import { mailLanguage } from '../../platform/mail/mail-language.ts';
import { enqueueNotice } from '../../platform/mail/notices.ts';
import { emailOr400 } from '../recovery/index.ts';
import type { EmailLinkView, MessageResponse, UserEnvelope } from './email.schemas.ts';

export const VERIFICATION_MESSAGE = 'We have sent a link to confirm your address.';
export const CHANGE_MESSAGE = 'We have sent a link to the new address; nothing changes until it is used.';

/**
 * Issues an `email_verify` link for the account's address and writes its mail, in the caller's
 * transaction, unless the address's mail budget is spent (then nothing is sent: same answer).
 * Returns whether a mail went out.
 */
export async function mailVerificationLink(
  ctx: AppContext,
  trx: Parameters<typeof issueLink>[0],
  user: UserRow,
  kind: LinkMailKind = 'email_verify',
  request?: ClientInfo['language'],
): Promise<boolean> {
  const budget = await reserveAttempt(trx, [mailBudget(user.email)]);
  if (!budget.ok) return false;
  const { token, link } = await issueLink(trx, {
    userId: user.id,
    purpose: 'email_verify',
    email: user.email,
    ttlS: ctx.config.emailLinkTtlS,
  });
  const mail = renderLinkMail(kind, {
    to: user.email,
    appName: ctx.config.appName,
    url: linkUrl(ctx.config.verifyEmailUrlTemplate, token),
    expiresAt: new Date(link.expires_at),
    // The recipient's locale, else the causing request's language, else DEFAULT_LOCALE (API §24).
    language: mailLanguage(ctx.languages, user.locale, request),
  });
  await ctx.mail.outbox.enqueue(trx, mail, 'email_verify');
  return true;
}

/**
 * POST /email/verification for a known account: 409 when already verified (said only to the
 * account's holder), then the per-user budgets (1 a minute, 5 an hour: 429), then the link.
 */
export async function requestVerification(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
): Promise<MessageResponse> {
  if (user.email_verified === 1) {
    throw new ApiError('email_already_verified', { detail: 'This address is already verified' });
  }
  await reserveOrThrow(
    ctx.db,
    verificationBudgets(user.id),
    'A verification mail can be asked for once a minute and five times an hour',
  );
  await ctx.db.transaction().execute(async (trx) => {
    const mailed = await mailVerificationLink(ctx, trx, user, 'email_verify', client.language);
    await recordAudit(trx, {
      action: 'email.verification_send',
      actor: { type: 'user', id: user.id },
      target: { type: 'user', id: user.id },
      client,
      details: { mailed },
    });
  });
  ctx.mail.outbox.nudge();
  return { message: VERIFICATION_MESSAGE };
}

/**
 * POST /email/verification without a token (REQUIRE_VERIFIED_EMAIL): the password is checked like
 * login's (reserved first; an unknown address spends a dummy hash and gets the same 401).
 */
export async function requestVerificationWithPassword(
  ctx: AppContext,
  input: { email: string; password: string },
  client: ClientInfo,
): Promise<MessageResponse> {
  const email = emailOr400(input.email);
  const user = await findUserByEmail(ctx.db, email);
  if (!(await checkPasswordReserved(ctx, user, email, input.password, client.ip)) || !user) {
    throw wrongPassword();
  }
  if (user.status === 'disabled') {
    throw new ApiError('account_disabled', { detail: 'This account has been disabled' });
  }
  return requestVerification(ctx, user, client);
}

/** GET /email/verify/<token>: the address the link proves (for a change: the new one). Reads only. */
export async function viewEmailLink(
  ctx: AppContext,
  token: string,
  client: ClientInfo,
): Promise<EmailLinkView> {
  const { link } = await peekLinkReserved(ctx.db, token, ['email_verify', 'email_change'], client.ip);
  return {
    email: link.email,
    purpose: link.purpose === 'email_change' ? 'change' : 'verify',
    expires_at: iso(link.expires_at),
  };
}

/**
 * POST /email/verify/<token>. A verification marks the address proven. A change switches the
 * address now (409 `email_taken` if it was taken meanwhile; the link stays unused), proves it,
 * revokes every session of the user (the call has no caller), kills the links sent to the old
 * address and mails the old address a notice. One transaction; exactly one of concurrent uses wins.
 */
export async function useEmailLink(
  ctx: AppContext,
  token: string,
  client: ClientInfo,
): Promise<UserEnvelope> {
  const { link, user } = await peekLinkReserved(ctx.db, token, ['email_verify', 'email_change'], client.ip);
  const updated = await ctx.db.transaction().execute(async (trx): Promise<UserRow> => {
    const now = Date.now();
    await consumeLink(trx, link, now);
    const audit = {
      actor: { type: 'user' as const, id: user.id },
      target: { type: 'user' as const, id: user.id },
      client,
    };
    if (link.purpose === 'email_verify') {
      if (!(await proveMailbox(trx, user.id, link.email, now))) throw linkInvalid();
      await recordAudit(trx, { ...audit, action: 'email.verify', details: { link_id: link.id } });
    } else {
      let switched: boolean;
      try {
        switched = await switchEmail(trx, user.id, link.email, now);
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        throw new ApiError('email_taken', { detail: 'Another account has taken this address meanwhile' });
      }
      if (!switched) throw linkInvalid();
      const sessionsRevoked = await revokeUserSessions(trx, user.id, 'email_change');
      // docs/api.md §16: a completed change ends every other live link and mfa_token of the user.
      await endOutstandingLinks(trx, user.id, now);
      await enqueueNotice(
        trx,
        { outbox: ctx.mail.outbox, appName: ctx.config.appName },
        'email_changed',
        user.email,
        { newEmail: link.email },
        mailLanguage(ctx.languages, user.locale, client.language),
      );
      await recordAudit(trx, {
        ...audit,
        action: 'email.change',
        details: { link_id: link.id, from: user.email, to: link.email, sessions_revoked: sessionsRevoked },
      });
    }
    const after = await findUserById(trx, user.id);
    if (!after) throw linkInvalid();
    return after;
  });
  ctx.mail.outbox.nudge();
  return { user: toPublicUser(updated) };
}

/**
 * POST /email/change. After a fresh proof (docs/api.md §16, as for removing a factor: the current
 * password, a TOTP or recovery code, or a passkey, so an account without a password can change its
 * address too; checked like login's, reserved first): the new address gets a `change` link — or,
 * when it belongs to an account, that account a notice instead (same answer, same kind of work: no
 * oracle) — within the new address's mail budget; the current address always gets the "change
 * requested" notice. Nothing changes until the link is used.
 */
export async function requestEmailChange(
  ctx: AppContext,
  user: UserRow,
  input: { new_email: string } & FreshProof,
  client: ClientInfo,
): Promise<MessageResponse> {
  const newEmail = emailOr400(input.new_email, '/new_email');
  const sameAddress = async () => {
    if (newEmail === user.email) {
      throw new ApiError('validation_failed', {
        detail: 'body/new_email is already the address of this account',
        errors: [{ path: '/new_email', message: 'is already the address of this account' }],
      });
    }
  };
  const { new_email: _, ...proof } = input;
  const mail = { outbox: ctx.mail.outbox, appName: ctx.config.appName };
  await requireFreshProof(
    ctx,
    user,
    proof,
    client,
    'email_change',
    async (trx, kind) => {
      const owner = await findUserByEmail(trx, newEmail);
      const budget = await reserveAttempt(trx, [mailBudget(newEmail)]);
      // Within the budget the link is issued whether the address is taken or free, so the work does
      // not depend on another account holding it (docs/api.md §12, no oracle;
      // test/security/enumeration-work.test.ts). Only a free address is sent it; for a taken one it
      // is never mailed (and would answer 409 `email_taken` if used). Past the budget nothing is
      // issued, either way, so the last link mailed stays usable.
      const issued = budget.ok
        ? await issueLink(trx, {
            userId: user.id,
            purpose: 'email_change',
            email: newEmail,
            ttlS: ctx.config.emailLinkTtlS,
          })
        : null;
      if (issued && owner) {
        // The owner's locale, else the asking request's language (API §24).
        const language = mailLanguage(ctx.languages, owner.locale, client.language);
        await enqueueNotice(trx, mail, 'email_change_to_taken', newEmail, {}, language);
      } else if (issued) {
        const { token, link } = issued;
        const message = renderLinkMail('email_change', {
          to: newEmail,
          appName: ctx.config.appName,
          url: linkUrl(ctx.config.verifyEmailUrlTemplate, token),
          expiresAt: new Date(link.expires_at),
          // The account's locale (the new address belongs to the same person), else the asking
          // request's language (API §24).
          language: mailLanguage(ctx.languages, user.locale, client.language),
        });
        await ctx.mail.outbox.enqueue(trx, message, 'email_change');
      }
      const language = mailLanguage(ctx.languages, user.locale, client.language);
      await enqueueNotice(trx, mail, 'email_change_requested', user.email, { newEmail }, language);
      await recordAudit(trx, {
        action: 'email.change_request',
        actor: { type: 'user', id: user.id },
        target: { type: 'user', id: user.id },
        client,
        details: {
          new_email: newEmail,
          new_address_taken: owner !== undefined,
          mailed: budget.ok,
          proof: kind,
        },
      });
    },
    sameAddress,
  );
  ctx.mail.outbox.nudge();
  return { message: CHANGE_MESSAGE };
}
