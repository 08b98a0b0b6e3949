import { reserveAttempt, reserveOrThrow } from '../../identity/budgets/attempt-budget.ts';
import type { ClientInfo } from '../../identity/index.ts';
import { findUserByEmail, insertUser, newUserRow, recordAudit } from '../../identity/index.ts';
import { mailBudget, signupBudget } from '../../identity/links/budgets.ts';
import { checkPasswordPolicy } from '../../identity/passwords/password-policy.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { isUniqueViolation } from '../../platform/db/dialect.ts';
import { mailLanguage } from '../../platform/mail/mail-language.ts';
import { enqueueNotice } from '../../platform/mail/notices.ts';
import { mailVerificationLink } from '../email/index.ts';
import { resendInvitation } from '../invitations/index.ts';
import { emailOr400, issueResetLink, type MessageResponse } from '../recovery/index.ts';

/** The one answer of sign-up, whatever the address (docs/api.md §12). */
export const SIGNUP_MESSAGE = 'Check your inbox to confirm your address.';

/**
 * POST /signup. The client's budget first (429), then the address's shape (400) and the password
 * policy (422) — both about the request, not about any account. The password is hashed on every
 * path, so a taken address costs the same argon2 work as a new one. Then one transaction: a new
 * address becomes an active, unverified user with a verification link; a taken one changes nothing
 * and its owner gets a notice with a recovery link (an invited owner: the invitation again). Mails
 * stay within the address's budget. Same answer either way.
 */
export async function signup(
  ctx: AppContext,
  input: { email: string; password: string; name?: string | undefined },
  client: ClientInfo,
): Promise<MessageResponse> {
  await reserveOrThrow(
    ctx.db,
    [signupBudget(client.ip)],
    'Too many sign-ups from this address; try again later',
  );
  const email = emailOr400(input.email);
  // docs/api.md §23 sso_required: every address at such a domain, account or not (a sign-up never
  // signs an existing admin in, so no admin exception here, and the answer says nothing of accounts).
  await ctx.signIn.checkAddress(ctx.db, { email, user: null });
  const policy = checkPasswordPolicy(input.password, {
    minLength: ctx.config.passwordMinLength,
    breachedCheck: ctx.config.passwordBreachedCheck,
    email,
  });
  if (!policy.ok) throw new ApiError('weak_password', { detail: policy.reason });
  const passwordHash = await ctx.passwords.hash(input.password);

  const attempt = () =>
    ctx.db.transaction().execute(async (trx) => {
      const now = Date.now();
      const existing = await findUserByEmail(trx, email);
      if (existing) {
        const budget = await reserveAttempt(trx, [mailBudget(email)]);
        let outcome: string;
        if (!budget.ok) outcome = 'over_mail_budget';
        else if (existing.status === 'active') {
          // The recovery link only where recovery is on (its page and endpoints answer 404 otherwise).
          const link = ctx.modules.isEnabled('recovery') ? await issueResetLink(ctx, trx, existing) : null;
          await enqueueNotice(
            trx,
            { outbox: ctx.mail.outbox, appName: ctx.config.appName },
            'signup_taken',
            email,
            link ? { link: { url: link.url, expiresAt: new Date(link.expiresAt) } } : {},
            // The owner's locale, else the signing-up request's language (API §24).
            mailLanguage(ctx.languages, existing.locale, client.language),
          );
          outcome = 'notice_sent';
        } else if (existing.status === 'invited' && ctx.modules.isEnabled('invitations')) {
          await resendInvitation(ctx, trx, existing, client, 'signup');
          outcome = 'invitation_resent';
        } else outcome = `not_sent_${existing.status}`;
        await recordAudit(trx, {
          action: 'user.signup',
          outcome: 'failure',
          actor: { type: 'anonymous' },
          target: { type: 'user', id: existing.id },
          client,
          details: { reason: 'address_taken', outcome },
        });
        return;
      }
      const user = newUserRow(
        { created_via: 'signup', email, name: input.name?.trim() ?? '', password_hash: passwordHash },
        now,
      );
      await insertUser(trx, user);
      const mailed = await mailVerificationLink(ctx, trx, user, 'signup', client.language);
      await recordAudit(trx, {
        action: 'user.signup',
        actor: { type: 'anonymous' },
        target: { type: 'user', id: user.id },
        client,
        details: { mailed },
      });
    });

  try {
    await attempt();
  } catch (err) {
    // Two sign-ups of one new address raced and the other inserted it: this one is now "taken".
    if (!isUniqueViolation(err)) throw err;
    await attempt();
  }
  ctx.mail.outbox.nudge();
  return { message: SIGNUP_MESSAGE };
}
