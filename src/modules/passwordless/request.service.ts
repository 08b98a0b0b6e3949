import type { Transaction } from 'kysely';
import { reserveAttempt, reserveOrThrow } from '../../identity/budgets/attempt-budget.ts';
import { deleteCountersBefore } from '../../identity/budgets/throttle.queries.ts';
import type { ClientInfo } from '../../identity/index.ts';
import { findUserByEmail, findUserById, normalizeEmail, recordAudit } from '../../identity/index.ts';
import { signinMailBudget, signinRequestBudget } from '../../identity/links/budgets.ts';
import { issueLink } from '../../identity/links/one-time-links.ts';
import type { SecretsKey } from '../../identity/tokens/secrets-key.ts';
import { afterAnswer } from '../../kernel/after-answer.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { DB, UserRow } from '../../platform/db/schema.ts';
import { renderAccountMail } from '../../platform/mail/layout.ts';
import { mailLanguage, withLang } from '../../platform/mail/mail-language.ts';
import { newSignInCode, signInCodeHash, signInKey, signInLinkUrl } from './email-signin.ts';

/** The one answer of a sign-in request, whatever the address (docs/api.md §20). */
export const REQUEST_MESSAGE =
  'If an account exists for this address, we have sent it a sign-in link and code.';

/**
 * POST /login/email, shaped like forgot-password (src/modules/recovery/): a malformed address is a
 * 400 (its shape says nothing about accounts); the client's budget comes next (429 before the 202);
 * then every path — unknown, active, invited, disabled, over the address's mail budget — does the same
 * work before the answer: one lookup, then one transaction that reserves the address's sign-in mail
 * budget and writes an audit entry. Only an active account within its budget also gets a new pair
 * (replacing its live one) and the mail, in a transaction of their own started after the answer
 * (kernel/after-answer.ts), so a known address does not answer slower. Past the budget nothing is
 * sent and the live pair stays.
 */
export async function requestEmailSignIn(
  ctx: AppContext,
  rawEmail: string,
  client: ClientInfo,
): Promise<{ message: string }> {
  const email = emailOr400(rawEmail);
  const key = signInKey(ctx);
  await reserveOrThrow(
    ctx.db,
    [signinRequestBudget(client.ip)],
    'Too many sign-in requests from this address; try again later',
  );
  const user = await findUserByEmail(ctx.db, email);
  // docs/api.md §23 sso_required: refused before any mail is sent or budget spent.
  await ctx.signIn.checkAddress(ctx.db, { email, user });
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    const budget = await reserveAttempt(trx, [signinMailBudget(email)]);
    let outcome: string;
    if (!user) outcome = 'no_account';
    else if (!budget.ok) outcome = 'over_mail_budget';
    else if (user.status === 'active') outcome = 'sent';
    else outcome = `not_sent_${user.status}`;
    await recordAudit(trx, {
      action: 'login.email_request',
      actor: { type: 'anonymous' },
      target: user ? { type: 'user', id: user.id } : null,
      client,
      details: { email, outcome },
    });
    return outcome;
  });
  if (user && outcome === 'sent') {
    afterAnswer(ctx, 'login.email_request', async () => {
      await ctx.db.transaction().execute(async (trx) => {
        // The account as it is now: changed in between (disabled, another address), it gets nothing.
        const now = await findUserById(trx, user.id);
        if (now?.status === 'active' && now.email === user.email) {
          await mailSignInPair(ctx, trx, key, now, client.language);
        }
      });
      ctx.mail.outbox.nudge();
    });
  }
  return { message: REQUEST_MESSAGE };
}

/**
 * Issues the pair (one row: link token hash and code HMAC) and writes its mail, in the caller's
 * transaction: in the account's `locale`, else the asking request's language (API §24).
 */
async function mailSignInPair(
  ctx: AppContext,
  trx: Transaction<DB>,
  key: SecretsKey,
  user: UserRow,
  request: ClientInfo['language'],
) {
  const code = newSignInCode();
  const { token, link } = await issueLink(trx, {
    userId: user.id,
    purpose: 'email_signin',
    email: user.email,
    ttlS: ctx.config.emailSigninTtlS,
    codeHash: signInCodeHash(key, user.id, code),
  });
  const minutes = Math.round(ctx.config.emailSigninTtlS / 60);
  const lang = mailLanguage(ctx.languages, user.locale, request);
  const app = ctx.config.appName;
  const url = signInLinkUrl(ctx, token);
  const mail = renderAccountMail({
    to: user.email,
    appName: app,
    subject: lang.t('mail.email_signin.subject'),
    paragraphs: [
      lang.t('mail.email_signin.p1', { app }),
      lang.t('mail.email_signin.p2', { code }),
      lang.t('mail.email_signin.p3', { minutes }),
    ],
    action: {
      label: lang.t('mail.email_signin.label'),
      // English keeps the link as it always was; another language opens the page in it.
      url: lang.tag === 'en' ? url : withLang(url, lang.tag),
      expiresAt: new Date(link.expires_at),
    },
    language: lang,
  });
  await ctx.mail.outbox.enqueue(trx, mail, 'email_signin');
}

/** A body e-mail that normalizes, or 400 `validation_failed`. */
export function emailOr400(raw: string): string {
  const email = normalizeEmail(raw);
  if (email === null) {
    throw new ApiError('validation_failed', {
      detail: 'body/email must be a valid email address',
      errors: [{ path: '/email', message: 'must be a valid email address' }],
    });
  }
  return email;
}

/**
 * The `passwordless.prune` job: this module's hourly budgets (`signin:` counters, src/identity/links/budgets.ts).
 * Its pairs are one-time links, deleted with the others by the links' own pruning.
 */
export async function pruneSignInBudgets(ctx: AppContext): Promise<void> {
  await deleteCountersBefore(ctx.db, Date.now() - 3_600_000, 'signin:');
}
