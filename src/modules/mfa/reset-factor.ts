import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../context.ts';
import type { DB, UserRow } from '../../db/schema.ts';
import { ApiError } from '../../errors.ts';
import type { ThrottleTicket } from '../../security/throttle.ts';
import type { ClientInfo } from '../auth/sessions.service.ts';
import { type PasskeyProof, passkeyFactor } from '../passkeys/passkey-factor.ts';
import { mfaRequired, secondFactors, spendCode } from './factors.ts';
import { releaseLoginAttempt, reserveLoginAttempt } from './reauth.ts';

/** What a password reset may carry as its second factor (docs/api.md §11). */
export interface ResetFactorInput {
  mfa_code?: string | undefined;
  passkey?: PasskeyProof | undefined;
}

/** A second factor checked for a reset: `spend` runs inside the reset's transaction. */
export interface ResetFactor {
  /** Spends the code in the reset's transaction; throws 401 (rolling the reset back) when it is wrong. */
  spend(trx: Kysely<DB> | Transaction<DB>): Promise<void>;
  /** After the reset committed: the attempt is given back. */
  settle(): Promise<void>;
}

/**
 * The second factor of a password reset (docs/api.md §11), asked of the same function as login. Null when
 * the user has no factor. Without one: 403 `mfa_required` with `methods` and no `mfa_token` (the link
 * is the proof). The attempt is reserved on the account's login throttle before any check (429 when
 * spent); a passkey is verified here, a code is spent by `spend` in the reset's transaction so that a
 * recovery code is used up exactly when the reset commits.
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
  const reservation: ThrottleTicket = await reserveLoginAttempt(ctx, user, client);
  const settle = () => releaseLoginAttempt(ctx, reservation);
  if (input.passkey !== undefined) {
    const proved = await passkeyFactor(ctx, input.passkey, 'reset')(user.id);
    if (proved === null)
      throw new ApiError('passkey_invalid', { detail: 'The passkey could not be verified' });
    return { spend: async () => {}, settle };
  }
  const code = input.mfa_code as string;
  return {
    async spend(trx) {
      if ((await spendCode(ctx, trx, user.id, code)) === null) {
        throw new ApiError('mfa_code_invalid', { detail: 'The code is not correct, or was already used' });
      }
    },
    settle,
  };
}
