import {
  consumeMfaToken,
  countMfaTokenTry,
  findMfaToken,
} from '../../identity/factors/mfa-tokens.queries.ts';
import { deleteExpiredMfaState } from '../../identity/factors/second-factors.queries.ts';
import {
  type ClientInfo,
  findUserById,
  MFA_TOKEN_MAX_TRIES,
  refuseSignIn,
  refuseWhilePasskeysOff,
  type SignedIn,
  type SignInWay,
  signIn,
  spendCode,
  type TokenResponse,
  withLoginAttempt,
} from '../../identity/index.ts';
import { hashOpaqueToken } from '../../identity/tokens/opaque-tokens.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';

/** A second factor presented to `POST /login/mfa`: a code, or a passkey assertion checked by `verifyPasskey`. */
export type PresentedFactor =
  | { kind: 'code'; code: string }
  | {
      kind: 'passkey';
      /** Verifies the assertion for this user (before the sign-in transaction); its amr value or null. */
      verify: (userId: string) => Promise<'hwk' | 'swk' | null>;
    };

/** Thrown inside the sign-in transaction to roll it back with a known outcome. */
class Rollback extends Error {
  readonly outcome: 'token_gone' | null;
  constructor(outcome: 'token_gone' | null) {
    super('rollback');
    this.outcome = outcome;
  }
}

const tokenInvalid = () =>
  new ApiError('mfa_token_invalid', { detail: 'The mfa_token is unknown, used, expired or out of tries' });

/**
 * POST /login/mfa (docs/api.md §13). Order: the token is looked up (unknown: 401); the login throttle
 * reserves this attempt (spent: 429, before anything else is said); one conditional write counts a
 * try on the token (dead or out of tries: 401); then the factor is checked and, when good, spent in
 * the same transaction that consumes the token and opens the session. A wrong factor keeps both
 * counts; a completed sign-in gives them back and clears the account's failures. Every refusal
 * that judged no factor gives the attempt back (withLoginAttempt).
 */
export async function completeMfaLogin(
  ctx: AppContext,
  mfaToken: string,
  factor: PresentedFactor,
  client: ClientInfo,
): Promise<TokenResponse> {
  if (factor.kind === 'passkey')
    refuseWhilePasskeysOff(ctx, "the mfa_required answer's methods say what to send");
  const row = await findMfaToken(ctx.db, hashOpaqueToken(mfaToken));
  const user = row ? await findUserById(ctx.db, row.user_id) : undefined;
  if (!row || !user) throw tokenInvalid();
  const method = factor.kind === 'code' ? 'mfa_code' : 'passkey';
  const way: SignInWay = { method };
  const outcome = await withLoginAttempt(ctx, { way, client, account: user.email }, async (attempt) => {
    // Not a check of a secret: the attempt does not count (given back).
    if (!(await countMfaTokenTry(ctx.db, row.id, Date.now(), MFA_TOKEN_MAX_TRIES))) throw tokenInvalid();
    if (user.status !== 'active') {
      throw new ApiError('account_disabled', { detail: 'This account has been disabled' });
    }
    // The assertion's own writes (challenge, counter) are single conditional writes of their own.
    const passkeyProved = factor.kind === 'passkey' ? await factor.verify(user.id) : null;
    let signedIn: SignedIn | 'token_gone' | null;
    try {
      signedIn = await ctx.db.transaction().execute(async (trx) => {
        // Consumed first and rolled back with everything else when the factor fails: the token keeps
        // its remaining tries, and a spent recovery code never outlives a sign-in that did not happen.
        if (!(await consumeMfaToken(trx, row.id, Date.now()))) throw new Rollback('token_gone');
        const proved =
          factor.kind === 'code' ? await spendCode(ctx, trx, user.id, factor.code) : passkeyProved;
        if (proved === null) throw new Rollback(null);
        const amr = signInAmr(row.first_factor, proved);
        return signIn(ctx, trx, {
          user,
          client,
          amr,
          details: { method },
          attempt,
          firstFactorChecked: true,
        });
      });
    } catch (err) {
      if (!(err instanceof Rollback)) throw err;
      signedIn = err.outcome;
    }
    if (signedIn === 'token_gone') throw tokenInvalid();
    if (signedIn === null) {
      const reason = factor.kind === 'code' ? 'mfa_code_invalid' : 'passkey_invalid';
      const error =
        factor.kind === 'code'
          ? new ApiError('mfa_code_invalid', { detail: 'The code is not correct, or was already used' })
          : new ApiError('passkey_invalid', { detail: 'The passkey could not be verified' });
      // A wrong factor is a wrong guess: the reservation stays.
      throw await refuseSignIn(attempt, { user, reason, wrongGuess: true }, error);
    }
    return signedIn;
  });
  return outcome.tokens;
}

/** Housekeeping (the `mfa.prune` job): MFA tokens, WebAuthn challenges and pending TOTP enrolments past their end. */
export function pruneMfaState(ctx: AppContext, now = Date.now()): Promise<void> {
  return deleteExpiredMfaState(ctx.db, now);
}

/**
 * The amr of a sign-in completed by a second factor: the first factor and what the second proved
 * (`["pwd","otp"]`, `["fed","hwk"]`…). After an e-mail link or code (first factor `otp`, docs/api.md
 * §20) it is `["otp","mfa"]`: two `otp` values would not say that two factors were used.
 */
export function signInAmr(firstFactor: string, proved: string): string[] {
  return firstFactor === 'otp' ? ['otp', 'mfa'] : [firstFactor, proved];
}
