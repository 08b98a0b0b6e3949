import type { ThrottleTicket } from '../../identity/budgets/throttle.ts';
import {
  type ClientInfo,
  checkAssertion,
  loginThrottle,
  mfaRequired,
  type PasskeyProof,
  recordAssertion,
  refuseWhilePasskeysOff,
  reserveLoginAttempt,
  secondFactors,
  spendCode,
} from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { Db, UserRow } from '../../platform/db/schema.ts';

/**
 * What a password reset may carry as its second factor (docs/api.md §11): the `mfa_code` and
 * `passkey` fields of recovery's ResetBody. Spelled out here over the mfa schema's PasskeyProof
 * rather than picked from ResetBody: recovery imports mfa, so mfa naming recovery would be a cycle.
 */
export interface ResetFactorInput {
  mfa_code?: string;
  passkey?: PasskeyProof;
}

/** A second factor checked for a reset: `spend` runs inside the reset's transaction. */
export interface ResetFactor {
  /** How the reset was proved, for its audit entry. */
  method: 'mfa_code' | 'passkey';
  /** Spends the factor in the reset's transaction; throws 401 (rolling the reset back) when it fails. */
  spend(trx: Db): Promise<void>;
  /** After the reset committed: the attempt is given back. */
  settle(): Promise<void>;
}

const passkeyInvalid = () => new ApiError('passkey_invalid', { detail: 'The passkey could not be verified' });

/**
 * Refusals that depend on the request alone, before the link is looked at: both factors at once
 * (400), or a passkey while the `passkeys` module is off — the passkey variant is then not served,
 * and says so with the code its options endpoint answers too (404 `module_disabled`, docs/recovery.md).
 */
export function refuseUnservedResetFactor(ctx: AppContext, input: ResetFactorInput): void {
  if (input.passkey === undefined) return;
  if (input.mfa_code !== undefined) {
    throw new ApiError('validation_failed', {
      detail: 'body/passkey must not be sent together with mfa_code',
      errors: [{ path: '/passkey', message: 'must not be sent together with mfa_code' }],
    });
  }
  refuseWhilePasskeysOff(ctx, "the link's methods say what the reset needs");
}

/**
 * The second factor of a password reset (docs/api.md §11), asked of the same function as login. Null when
 * the user has no factor. Without one: 403 `mfa_required` with `methods` and no `mfa_token` (the link
 * is the proof). The attempt is reserved on the account's login throttle before any check (429 when
 * spent) and kept when the factor fails. A code is spent by `spend` in the reset's transaction, so a
 * recovery code is used up exactly when the reset commits. A passkey: its challenge (purpose `reset`,
 * bound to this user) is consumed and its signature verified here, before the transaction; `spend`
 * records its use (the signature counter's compare-and-set) in the reset's transaction. Either way a
 * refused factor rolls nothing forward and the link stays usable.
 */
export async function prepareResetFactor(
  ctx: AppContext,
  user: UserRow,
  input: ResetFactorInput,
  client: ClientInfo,
): Promise<ResetFactor | null> {
  const methods = await secondFactors(ctx, ctx.db, user.id);
  if (methods.length === 0) return null;
  if (input.mfa_code === undefined && input.passkey === undefined) throw mfaRequired(methods);
  // The reset's transaction is the recovery module's, so the attempt outlives this function: its
  // ticket is reserved on the pipeline's login throttle here and given back by `settle`.
  const reservation: ThrottleTicket = await reserveLoginAttempt(ctx, user.email, client.ip);
  const settle = () => loginThrottle(ctx).release(reservation);
  if (input.passkey !== undefined) {
    // A challenge of a login (`mfa`, `login`) or of another user's reset does not pass here.
    const checked = await checkAssertion(ctx, input.passkey, 'reset', false, user.id);
    if (checked === null) throw passkeyInvalid();
    return {
      method: 'passkey',
      async spend(trx) {
        if (!(await recordAssertion(trx, checked))) throw passkeyInvalid();
      },
      settle,
    };
  }
  const code = input.mfa_code as string;
  return {
    method: 'mfa_code',
    async spend(trx) {
      if ((await spendCode(ctx, trx, user.id, code)) === null) {
        throw new ApiError('mfa_code_invalid', { detail: 'The code is not correct, or was already used' });
      }
    },
    settle,
  };
}
