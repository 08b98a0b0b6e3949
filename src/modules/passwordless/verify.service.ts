import {
  type AuditEvent,
  type ClientInfo,
  findUserByEmail,
  type LoginAttempt,
  mfaRequired,
  proveMailbox,
  refuseSignIn,
  type SignInOutcome,
  type SignInWay,
  signIn,
  type TokenResponse,
  withLoginAttempt,
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
import { CODE_MAX_TRIES, codeMatches, signInKey, signInRefused } from './email-signin.ts';
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

/** The e-mail sign-in as a way in: a code or a link, each its `method`. */
const CODE_WAY: SignInWay = { method: 'email_code' };
const LINK_WAY: SignInWay = { method: 'email_link' };

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
  const outcome = await withLoginAttempt(ctx, { way: CODE_WAY, client, account: email }, async (attempt) => {
    const user = await findUserByEmail(ctx.db, email);
    const link = user ? await liveCodeLinkOfUser(ctx.db, user, 'email_signin') : undefined;
    const tryNumber = link ? await reserveCodeTry(ctx.db, link, CODE_MAX_TRIES) : null;
    if (!user || !link || tryNumber === null || link.code_hash === null) {
      throw await refuse(attempt, user, email);
    }
    if (!codeMatches(key, user.id, input.code.trim(), link.code_hash)) {
      if (tryNumber >= CODE_MAX_TRIES) await endLink(ctx.db, link);
      throw await refuse(attempt, user, email);
    }
    return finish(ctx, attempt, user, link);
  });
  return answer(outcome);
}

/**
 * A link's token: behind the client address's link budget (reserved before the lookup, given back
 * for a live link), as recovery's links are. A dead or unknown token is 401 `invalid_credentials`
 * here (this endpoint signs in; it is not a link page).
 */
async function verifyLink(ctx: AppContext, token: string, client: ClientInfo): Promise<TokenResponse> {
  const outcome = await withLoginAttempt(ctx, { way: LINK_WAY, client }, async (attempt) => {
    let live: { link: LinkRow; user: UserRow };
    try {
      live = await peekLinkReserved(ctx.db, token, ['email_signin'], client.ip);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'link_invalid') throw await refuse(attempt, undefined);
      throw err;
    }
    return finish(ctx, attempt, live.user, live.link);
  });
  return answer(outcome);
}

/** Second factors are asked the way POST /login asks them: 403 `mfa_required` with an `mfa_token`. */
function answer(outcome: SignInOutcome): TokenResponse {
  if (outcome.kind === 'second_factor_due') throw mfaRequired(outcome.methods, outcome.mfaToken);
  return outcome.tokens;
}

/**
 * The pair was right. Either way the pair is used up (both halves) and the mailbox proven in one
 * transaction, with signIn: the session opens there too, with `amr: ["otp"]`, or, when the account
 * has second factors, an `mfa_token` whose first factor is `otp` is issued. Of two concurrent uses
 * exactly one wins; the other is a 401. An account whose every factor is switched off: 403
 * `second_factor_unavailable`, its attempt given back, nothing used up.
 */
async function finish(
  ctx: AppContext,
  attempt: LoginAttempt,
  user: UserRow,
  link: LinkRow,
): Promise<SignInOutcome> {
  const { client, way } = attempt;
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const now = Date.now();
      await consumeLink(trx, link, now).catch(() => {
        throw new PairGone();
      });
      if (!(await proveMailbox(trx, user.id, link.email, now))) throw new PairGone();
      // The address was proven just now: audited, and so `email.verified` (docs/api.md §19).
      const events: AuditEvent[] = [];
      if (user.email_verified !== 1) {
        events.push({
          action: 'email.verify',
          actor: { type: 'user', id: user.id },
          target: { type: 'user', id: user.id },
          client,
          details: { via: 'email_signin', link_id: link.id },
        });
      }
      return signIn(ctx, trx, {
        user: { ...user, email_verified: 1 },
        client,
        amr: EMAIL_OTP_AMR,
        details: { method: way.method, link_id: link.id },
        attempt,
        events,
        secondFactor: { firstFactor: 'otp', details: { method: way.method } },
      });
    });
  } catch (err) {
    if (!(err instanceof PairGone)) throw err;
    throw await refuse(attempt, user);
  }
}

/** Audits the failure and answers the one 401 (a code's throttle reservation stays: it is the count). */
function refuse(attempt: LoginAttempt, user: UserRow | undefined, email?: string): Promise<ApiError> {
  return refuseSignIn(
    attempt,
    {
      user,
      reason: 'invalid_credentials',
      wrongGuess: true,
      ...(email !== undefined && { details: { email } }),
    },
    signInRefused(),
  );
}
