import type { Transaction } from 'kysely';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { DB, UserRow } from '../../platform/db/schema.ts';
import { verifyUserPassword } from '../budgets/password-attempt.ts';
import {
  type CheckedAssertion,
  checkAssertion,
  recordAssertion,
  refuseWhilePasskeysOff,
} from '../factors/passkey.ts';
import type { FreshProofBody, PasskeyProof } from '../factors/proof.schemas.ts';
import { spendCode } from '../factors/second-factors.ts';
import type { ClientInfo } from '../sessions.ts';
import { type LoginAttempt, refuseSignIn, withLoginAttempt } from './attempt.ts';

/**
 * A fresh proof as the body carries it (docs/api.md §16): the current password, a TOTP or recovery
 * code, or a passkey assertion over a challenge from `POST /passkeys/authentication/options` called
 * with the caller's Bearer token (purpose `reauth`, bound to the caller).
 */
export type FreshProof = Exclude<FreshProofBody, null>;

/** Which kind of proof was accepted; the change records it in its audit entry. */
export type ProofKind = 'password' | 'code' | 'passkey';

/** The `method` of a proof's attempt (its `login.failure` entry) and the reason a wrong one gives. */
const METHOD = { password: 'password', code: 'mfa_code', passkey: 'passkey' } as const;
const REASON = {
  password: 'invalid_credentials',
  code: 'mfa_code_invalid',
  passkey: 'passkey_invalid',
} as const;

/** What a proven attempt ends as: no sign-in, so withLoginAttempt gives the attempt back and counts no login. */
interface Proven<T> {
  kind: 'proven';
  result: T;
}

/**
 * Runs `check` as one attempt of the caller's login throttle (docs/api.md §13: wrong codes and wrong
 * current passwords count like failed logins), through the sign-in pipeline's withLoginAttempt: the
 * attempt is reserved before anything is checked (spent: 429 `rate_limited`, counted), a wrong proof
 * is refused by refuseSignIn (the reservation kept, `login.failure` by the signed-in user with the
 * proof's `purpose`, counted `failure`), and a good proof gives the attempt back and resets nothing:
 * a proof is no login.
 */
function proofAttempt<T>(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  kind: ProofKind,
  purpose: string,
  check: (refuse: () => Promise<ApiError>, attempt: LoginAttempt) => Promise<T>,
): Promise<T> {
  const way = { method: METHOD[kind] };
  return withLoginAttempt<Proven<T>>(ctx, { way, client, account: user.email }, async (attempt) => {
    const refuse = () =>
      refuseSignIn(
        attempt,
        {
          user,
          actor: { type: 'user', id: user.id },
          reason: REASON[kind],
          after: { purpose },
          wrongGuess: true,
        },
        refusal(kind),
      );
    return { kind: 'proven', result: await check(refuse, attempt) };
  }).then((proven) => proven.result);
}

/**
 * Checks `current_password` of a signed-in user before a factor is added (a stolen access token
 * alone cannot add its own factor). Wrong: 401 `invalid_credentials`, counted and audited like a
 * failed login. Right: the attempt is given back — but nothing is reset by a password alone.
 */
export function confirmCurrentPassword(
  ctx: AppContext,
  user: UserRow,
  password: string,
  client: ClientInfo,
  purpose: string,
): Promise<void> {
  return proofAttempt(ctx, user, client, 'password', purpose, async (refuse) => {
    if (!(await verifyUserPassword(ctx, user, password))) throw await refuse();
  });
}

/**
 * The kind of proof a body carries. None: 401 `reauthentication_required` (docs/api.md §16), before
 * anything is reserved or looked at; more than one: 400 (one proof, so no attempt is spent twice).
 */
export function proofKind(proof: FreshProof | null | undefined): ProofKind {
  const kinds: ProofKind[] = [];
  if (proof?.current_password !== undefined) kinds.push('password');
  if (proof?.code !== undefined) kinds.push('code');
  if (proof?.passkey !== undefined) kinds.push('passkey');
  const [kind, ...more] = kinds;
  if (kind === undefined) {
    throw new ApiError('reauthentication_required', {
      detail: 'This change needs a fresh proof: current_password, code (TOTP or recovery code) or passkey',
    });
  }
  if (more.length > 0) {
    throw new ApiError('validation_failed', {
      detail: 'body must carry one proof: current_password, code or passkey',
      errors: [{ path: '', message: 'must carry one proof: current_password, code or passkey' }],
    });
  }
  return kind;
}

/** Thrown inside the change's transaction when the proof fails there: rolls it back. */
class ProofRefused extends Error {}

/**
 * docs/api.md §16 "Removing a factor needs a fresh proof": checks the proof of a signed-in user and
 * runs `change` in the transaction that spends it (a recovery code or TOTP step, a passkey's counter),
 * so a proof never outlives a change that did not happen, nor the other way round. The attempt is
 * the pipeline's (proofAttempt above): reserved first (spent: 429, nothing checked); a wrong proof
 * keeps it (401 `invalid_credentials`, `mfa_code_invalid` or `passkey_invalid`, audited as a failed
 * login); a good one gives it back (and resets nothing, like a correct password alone: §13); a
 * change that fails after a good proof gives it back too. `before` runs after the proof's presence
 * is established and before the attempt is reserved: the caller's 404s (nothing to remove) spend
 * no attempt.
 */
export async function requireFreshProof<T>(
  ctx: AppContext,
  user: UserRow,
  proof: FreshProof | null | undefined,
  client: ClientInfo,
  purpose: string,
  change: (trx: Transaction<DB>, kind: ProofKind) => Promise<T>,
  before?: () => Promise<void>,
): Promise<T> {
  const kind = proofKind(proof);
  if (kind === 'passkey') refuseWhilePasskeysOff(ctx, 'prove yourself with current_password or code');
  await before?.();
  return proofAttempt(ctx, user, client, kind, purpose, async (refuse) => {
    let assertion: CheckedAssertion | null = null;
    if (kind === 'password' && !(await verifyUserPassword(ctx, user, proof?.current_password as string))) {
      throw await refuse();
    }
    if (kind === 'passkey') {
      assertion = await checkAssertion(ctx, proof?.passkey as PasskeyProof, 'reauth', false, user.id);
      if (assertion === null) throw await refuse();
    }
    try {
      return await ctx.db.transaction().execute(async (trx) => {
        if (kind === 'code' && !(await codeSpent(ctx, trx, user.id, proof?.code as string))) {
          throw new ProofRefused();
        }
        if (assertion !== null && !(await recordAssertion(trx, assertion))) throw new ProofRefused();
        return change(trx, kind);
      });
    } catch (err) {
      // Refused in the transaction: rolled back, then refused as a wrong guess. Anything else (the
      // change refused after a good proof, an outage) leaves the attempt to withLoginAttempt, which
      // gives it back.
      if (err instanceof ProofRefused) throw await refuse();
      throw err;
    }
  });
}

/** A code can only be right where a key sealed the user's factors; without one, no code is. */
async function codeSpent(ctx: AppContext, trx: Transaction<DB>, userId: string, code: string) {
  if (ctx.secrets.key() === null) return false;
  return (await spendCode(ctx, trx, userId, code)) !== null;
}

function refusal(kind: ProofKind): ApiError {
  if (kind === 'password') {
    return new ApiError('invalid_credentials', { detail: 'The current password is not correct' });
  }
  if (kind === 'code') {
    return new ApiError('mfa_code_invalid', { detail: 'The code is not correct, or was already used' });
  }
  return new ApiError('passkey_invalid', { detail: 'The passkey could not be verified' });
}
