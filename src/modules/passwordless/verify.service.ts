import {
  createLoginThrottle,
  type LoginThrottle,
  type ThrottleTicket,
} from '../../identity/budgets/throttle.ts';
import {
  type ClientInfo,
  completeSignIn,
  findUserByEmail,
  recordAudit,
  type TokenResponse,
} from '../../identity/index.ts';
import {
  consumeLink,
  endLink,
  type LinkRow,
  liveCodeLinkOfUser,
  peekLinkReserved,
  reserveCodeTry,
} from '../../identity/links/one-time-links.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { countLogin } from '../core/index.ts';
import { issueMfaToken, mfaRequired, secondFactors } from '../mfa/index.ts';
import { CODE_MAX_TRIES, codeMatches, signInKey, signInRefused } from './email-signin.ts';
import { markMailboxProven } from './passwordless.queries.ts';
import { emailOr400 } from './request.service.ts';

/** The first factor an e-mail link or code proves (RFC 8176 `otp`: a one-time code sent out of band). */
export const EMAIL_OTP_AMR = ['otp'] as const;

export type VerifyInput = { email: string; code: string } | { token: string };

/** Thrown inside the sign-in transaction when another use of the pair won. */
class PairGone extends Error {}

/** POST /login/email/verify (docs/api.md §20): a code with its address, or a link's token. */
export function verifyEmailSignIn(
  ctx: AppContext,
  input: VerifyInput,
  client: ClientInfo,
): Promise<TokenResponse> {
  return 'token' in input ? verifyLink(ctx, input.token, client) : verifyCode(ctx, input, client);
}

/**
 * A code. Order: the address's shape (400); the account's login throttle reserves this attempt
 * (spent: 429, before anything is looked at); then the live pair of the address, if any; one
 * conditional write reserves a try on it (5 at most, however many arrive at once); only then is the
 * code compared. A wrong code keeps both counts (the throttle's is the counted failure) and, on its
 * fifth try, ends the pair — link included. Unknown address, no live pair, out of tries, wrong code:
 * the same 401 `invalid_credentials`.
 */
async function verifyCode(
  ctx: AppContext,
  input: { email: string; code: string },
  client: ClientInfo,
): Promise<TokenResponse> {
  const email = emailOr400(input.email);
  const key = signInKey(ctx);
  const throttle = loginThrottle(ctx);
  let ticket: ThrottleTicket;
  try {
    ticket = await throttle.reserve(email, client.ip);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'rate_limited') countLogin(ctx, 'rate_limited');
    throw err;
  }
  const user = await findUserByEmail(ctx.db, email);
  const link = user ? await liveCodeLinkOfUser(ctx.db, user, 'email_signin') : undefined;
  const tryNumber = link ? await reserveCodeTry(ctx.db, link, CODE_MAX_TRIES) : null;
  if (!user || !link || tryNumber === null || link.code_hash === null) {
    return refuse(ctx, user, client, 'code', email);
  }
  if (!codeMatches(key, user.id, input.code.trim(), link.code_hash)) {
    if (tryNumber >= CODE_MAX_TRIES) await endLink(ctx.db, link);
    return refuse(ctx, user, client, 'code', email);
  }
  return finish(ctx, user, link, client, { throttle, ticket, method: 'email_code' });
}

/**
 * A link's token: behind the client address's link budget (reserved before the lookup, given back
 * for a live link), as recovery's links are. A dead or unknown token is 401 `invalid_credentials`
 * here (this endpoint signs in; it is not a link page).
 */
async function verifyLink(ctx: AppContext, token: string, client: ClientInfo): Promise<TokenResponse> {
  let live: { link: LinkRow; user: UserRow };
  try {
    live = await peekLinkReserved(ctx.db, token, ['email_signin'], client.ip);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'link_invalid') return refuse(ctx, undefined, client, 'link');
    throw err;
  }
  return finish(ctx, live.user, live.link, client, { method: 'email_link' });
}

/**
 * The pair was right. Second factors are asked the way POST /login asks them: 403 `mfa_required`
 * with an `mfa_token` whose first factor is `otp`. Either way the pair is used up (both halves) and
 * the mailbox proven in one transaction; without a second factor the session opens there too, through
 * completeSignIn, with `amr: ["otp"]`. Of two concurrent uses exactly one wins; the other is a 401.
 */
async function finish(
  ctx: AppContext,
  user: UserRow,
  link: LinkRow,
  client: ClientInfo,
  how: { method: 'email_code' | 'email_link'; throttle?: LoginThrottle; ticket?: ThrottleTicket },
): Promise<TokenResponse> {
  const { throttle, ticket, method } = how;
  let methods: Awaited<ReturnType<typeof secondFactors>>;
  try {
    methods = await secondFactors(ctx, ctx.db, user.id);
  } catch (err) {
    // 403 second_factor_unavailable (docs/api.md §16): no wrong guess, the attempt is given back.
    if (ticket && throttle) await throttle.release(ticket);
    throw err;
  }
  let outcome: TokenResponse | { mfaToken: string };
  try {
    outcome = await ctx.db.transaction().execute(async (trx) => {
      const now = Date.now();
      await consumeLink(trx, link, now).catch(() => {
        throw new PairGone();
      });
      if (!(await markMailboxProven(trx, user.id, link.email, now))) throw new PairGone();
      const proven: UserRow = { ...user, email_verified: 1 };
      // The address was proven just now: audited, and so `email.verified` (docs/api.md §19).
      if (user.email_verified !== 1) {
        await recordAudit(trx, {
          action: 'email.verify',
          actor: { type: 'user', id: user.id },
          target: { type: 'user', id: user.id },
          client,
          details: { via: 'email_signin', link_id: link.id },
        });
      }
      if (methods.length > 0) {
        await recordAudit(trx, {
          action: 'login.mfa_required',
          actor: { type: 'anonymous' },
          target: { type: 'user', id: user.id },
          client,
          details: { method, methods },
        });
        return { mfaToken: await issueMfaToken(trx, user.id, 'otp') };
      }
      if (ticket && throttle) await throttle.succeed(ticket, trx);
      return completeSignIn(ctx, trx, proven, client, EMAIL_OTP_AMR, { method, link_id: link.id });
    });
  } catch (err) {
    if (!(err instanceof PairGone)) throw err;
    return refuse(ctx, user, client, method === 'email_code' ? 'code' : 'link');
  }
  if ('mfaToken' in outcome) {
    // A right code alone clears nothing (as a right password): the counts clear when the sign-in
    // completes. It was no wrong guess, so its attempt is given back.
    if (ticket && throttle) await throttle.release(ticket);
    throw mfaRequired(methods, outcome.mfaToken);
  }
  countLogin(ctx, 'success');
  return outcome;
}

/** Audits the failure and throws the one 401 (a code's throttle reservation stays: it is the count). */
async function refuse(
  ctx: AppContext,
  user: UserRow | undefined,
  client: ClientInfo,
  half: 'code' | 'link',
  email?: string,
): Promise<never> {
  await recordAudit(ctx.db, {
    action: 'login.failure',
    outcome: 'failure',
    actor: { type: 'anonymous' },
    target: user ? { type: 'user', id: user.id } : null,
    client,
    details: {
      method: half === 'code' ? 'email_code' : 'email_link',
      ...(email !== undefined && { email }),
      reason: 'invalid_credentials',
    },
  });
  countLogin(ctx, 'failure');
  throw signInRefused();
}

/** The login throttle of docs/api.md §5: codes and passwords share the account's budget. */
function loginThrottle(ctx: AppContext): LoginThrottle {
  return createLoginThrottle(ctx.db, { failuresPerAddressPerMin: ctx.config.loginFailuresPerAddressPerMin });
}
