import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { DB, UserRow } from '../../platform/db/schema.ts';
import { recordAudit } from '../audit.queries.ts';
import { createLoginThrottle, type LoginThrottle, type ThrottleTicket } from '../budgets/throttle.ts';
import type { ClientInfo } from '../sessions.ts';

/** What a sign-in attempt ended as, for `gatehouse_logins_total{outcome}`. */
export type LoginOutcome = 'success' | 'failure' | 'rate_limited';

/**
 * Counts an outcome in the metrics. The counter belongs to the `core` module (its registry is the
 * app's); the identity core imports no feature, so a way in names it once, in its `SignInWay`.
 */
export type LoginCounter = (ctx: AppContext, outcome: LoginOutcome) => void;

/** A way in: the `method` its audit entries name, and where its outcomes are counted. */
export interface SignInWay {
  readonly method: string;
  readonly count: LoginCounter;
}

/**
 * One sign-in attempt in progress (withLoginAttempt): the way in, the caller, and — for a way whose
 * proof is a guessable secret (a password, a code) — the ticket reserved on the account's login
 * throttle (docs/api.md §5). The ticket is settled exactly once: `succeed` in the transaction that
 * signs in (signIn does it), `keep` for a wrong guess (refuseSignIn), `release` for everything
 * that was no guess; withLoginAttempt releases a ticket left unsettled.
 */
export interface LoginAttempt {
  readonly ctx: AppContext;
  readonly way: SignInWay;
  readonly client: ClientInfo;
  /** The account's failures clear and the address gets its attempt back, in the sign-in's transaction. */
  succeed(trx: Kysely<DB> | Transaction<DB>): Promise<void>;
  /** The attempt does not count (no guess was judged, or the right secret on a refused account). */
  release(): Promise<void>;
  /** A wrong guess: the reservation stays, it is the counted failure. */
  keep(): void;
}

/**
 * Owns one sign-in attempt from its ticket to its count: reserves the attempt on the login throttle
 * when `account` is given (spent: 429 `rate_limited`, counted as such, nothing else looked at), runs
 * the way in, and settles what it left: an outcome of kind `signed_in` is counted `success`, one of
 * kind `second_factor_due` gives the attempt back (a right first factor is no wrong guess, and resets nothing until the
 * sign-in completes, docs/api.md §13), and an error that settled nothing (an outage, a refusal that
 * was no guess) gives it back too. Refusals are audited and counted by refuseSignIn, not here.
 */
export async function withLoginAttempt<T extends { kind: string }>(
  ctx: AppContext,
  opening: { way: SignInWay; client: ClientInfo; account?: string },
  run: (attempt: LoginAttempt) => Promise<T>,
): Promise<T> {
  const { way, client } = opening;
  let throttle: LoginThrottle | null = null;
  let ticket: ThrottleTicket | null = null;
  if (opening.account !== undefined) {
    throttle = loginThrottle(ctx);
    try {
      ticket = await throttle.reserve(opening.account, client.ip);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'rate_limited') way.count(ctx, 'rate_limited');
      throw err;
    }
  }
  let settled = ticket === null;
  // Whether `succeed` wrote its settlement (in the sign-in's transaction, which may still roll back).
  let succeeded = false;
  const release = async () => {
    if (settled || !throttle || !ticket) return;
    settled = true;
    await throttle.release(ticket);
  };
  const attempt: LoginAttempt = {
    ctx,
    way,
    client,
    async succeed(trx) {
      if (settled || !throttle || !ticket) return;
      await throttle.succeed(ticket, trx);
      settled = true;
      succeeded = true;
    },
    release,
    keep() {
      settled = true;
    },
  };
  let outcome: T;
  try {
    outcome = await run(attempt);
  } catch (err) {
    // A claims hook that refused the token (docs/claims-hook.md) failed after the proof was judged
    // right, inside the sign-in's transaction: `succeed`'s writes rolled back with it, so the
    // reservation still stands and is given back here. A failed hook is no failed login.
    if (succeeded && err instanceof ApiError && err.code === 'token_hook_failed') {
      settled = false;
      succeeded = false;
    }
    // Nothing was judged, or the refusal was no guess: an unsettled attempt must not count.
    await release().catch(() => undefined);
    throw err;
  }
  if (outcome.kind === 'second_factor_due') await release();
  else if (outcome.kind === 'signed_in') way.count(ctx, 'success');
  return outcome;
}

/** The login throttle of docs/api.md §5: passwords, codes and fresh proofs share the account's budget. */
export function loginThrottle(ctx: AppContext): LoginThrottle {
  return createLoginThrottle(ctx.db, { failuresPerAddressPerMin: ctx.config.loginFailuresPerAddressPerMin });
}

/** Why a sign-in was refused, as its `login.failure` entry says. */
export interface Refusal {
  /** The account the attempt named, when there is one (the entry's target). */
  user?: Pick<UserRow, 'id'> | null | undefined;
  /** `details.reason`: an error code (`invalid_credentials`, `account_disabled`…). */
  reason: string;
  /** More `details`, written after `method` and before `reason` (the typed address, the issuer…). */
  details?: Record<string, unknown>;
  /** More `details`, written after `reason` (the refusal's detail, a link refusal…). */
  after?: Record<string, unknown>;
  /** A wrong guess keeps the attempt's reservation (the counted failure); anything else gives it back. */
  wrongGuess: boolean;
}

/**
 * The one refusal of a sign-in: audited as `login.failure` (anonymous, naming the account when
 * there is one, `details.method` the way's), counted `failure`, the attempt's ticket kept for a
 * wrong guess and given back otherwise. Returns `error`, for the way in to throw
 * (`throw await refuseSignIn(attempt, {…}, invalidCredentials())`).
 */
export async function refuseSignIn(
  attempt: LoginAttempt,
  refusal: Refusal,
  error: ApiError,
): Promise<ApiError> {
  const { ctx, way, client } = attempt;
  if (refusal.wrongGuess) attempt.keep();
  else await attempt.release();
  await recordAudit(ctx.db, {
    action: 'login.failure',
    outcome: 'failure',
    actor: { type: 'anonymous' },
    target: refusal.user ? { type: 'user', id: refusal.user.id } : null,
    client,
    details: { method: way.method, ...refusal.details, reason: refusal.reason, ...refusal.after },
  });
  way.count(ctx, 'failure');
  return error;
}
