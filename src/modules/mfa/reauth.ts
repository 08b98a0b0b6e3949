import type { Transaction } from 'kysely';
import { verifyUserPassword } from '../../identity/budgets/password-attempt.ts';
import type { ThrottleTicket } from '../../identity/budgets/throttle.ts';
import {
  type CheckedAssertion,
  type ClientInfo,
  checkAssertion,
  countLogin,
  type FreshProofBody,
  loginThrottle,
  type PasskeyProof,
  recordAssertion,
  recordAudit,
  refuseWhilePasskeysOff,
  spendCode,
} from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { DB, UserRow } from '../../platform/db/schema.ts';

/**
 * Reserves one attempt of the caller's login throttle before a secret is checked (docs/api.md §13:
 * wrong codes and wrong current passwords count like failed logins). Spent: 429.
 */
export async function reserveLoginAttempt(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
): Promise<ThrottleTicket> {
  try {
    return await loginThrottle(ctx).reserve(user.email, client.ip);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'rate_limited') countLogin(ctx, 'rate_limited');
    throw err;
  }
}

/** Gives a reserved attempt back (the secret was right, or was never checked). */
export function releaseLoginAttempt(ctx: AppContext, ticket: ThrottleTicket): Promise<void> {
  return loginThrottle(ctx).release(ticket);
}

/**
 * Checks `current_password` of a signed-in user before a factor is added (a stolen access token
 * alone cannot add its own factor). Wrong: 401 `invalid_credentials`, counted and audited like a
 * failed login. Right: the attempt is given back — but nothing is reset by a password alone.
 */
export async function confirmCurrentPassword(
  ctx: AppContext,
  user: UserRow,
  password: string,
  client: ClientInfo,
  purpose: string,
): Promise<void> {
  const reservation = await reserveLoginAttempt(ctx, user, client);
  if (!(await verifyUserPassword(ctx, user, password))) {
    await auditWrongProof(ctx, user, client, 'password', purpose);
    throw wrongPassword();
  }
  await releaseLoginAttempt(ctx, reservation);
}

/**
 * A fresh proof as the body carries it (docs/api.md §16): the current password, a TOTP or recovery
 * code, or a passkey assertion over a challenge from `POST /passkeys/authentication/options` called
 * with the caller's Bearer token (purpose `reauth`, bound to the caller).
 */
export type FreshProof = Exclude<FreshProofBody, null>;

/** Which kind of proof was accepted; the change records it in its audit entry. */
export type ProofKind = 'password' | 'code' | 'passkey';

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
 * reserved on the account's login throttle first (spent: 429, nothing checked); a wrong proof keeps
 * it (401 `invalid_credentials`, `mfa_code_invalid` or `passkey_invalid`, audited as a failed
 * login); a good one gives it back (and resets nothing, like a correct password alone: §13).
 * `before` runs after the proof's presence is established and before the attempt is reserved:
 * the caller's 404s (nothing to remove) spend no attempt.
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
  const reservation = await reserveLoginAttempt(ctx, user, client);
  let assertion: CheckedAssertion | null = null;
  try {
    if (kind === 'password' && !(await verifyUserPassword(ctx, user, proof?.current_password as string))) {
      throw new ProofRefused();
    }
    if (kind === 'passkey') {
      assertion = await checkAssertion(ctx, proof?.passkey as PasskeyProof, 'reauth', false, user.id);
      if (assertion === null) throw new ProofRefused();
    }
  } catch (err) {
    if (!(err instanceof ProofRefused)) await releaseLoginAttempt(ctx, reservation).catch(() => undefined);
    else await auditWrongProof(ctx, user, client, kind, purpose);
    throw err instanceof ProofRefused ? refusal(kind) : err;
  }
  let result: T;
  try {
    result = await ctx.db.transaction().execute(async (trx) => {
      if (kind === 'code' && !(await codeSpent(ctx, trx, user.id, proof?.code as string))) {
        throw new ProofRefused();
      }
      if (assertion !== null && !(await recordAssertion(trx, assertion))) throw new ProofRefused();
      return change(trx, kind);
    });
  } catch (err) {
    if (err instanceof ProofRefused) {
      await auditWrongProof(ctx, user, client, kind, purpose);
      throw refusal(kind);
    }
    // The proof was good (or never judged) and the change refused: the attempt does not count.
    await releaseLoginAttempt(ctx, reservation).catch(() => undefined);
    throw err;
  }
  await releaseLoginAttempt(ctx, reservation);
  return result;
}

/** A code can only be right where a key sealed the user's factors; without one, no code is. */
async function codeSpent(ctx: AppContext, trx: Transaction<DB>, userId: string, code: string) {
  if (ctx.secrets.key() === null) return false;
  return (await spendCode(ctx, trx, userId, code)) !== null;
}

/** Whether the password is the user's; an account without one spends a dummy verification. */
function wrongPassword(): ApiError {
  return new ApiError('invalid_credentials', { detail: 'The current password is not correct' });
}

function refusal(kind: ProofKind): ApiError {
  if (kind === 'password') return wrongPassword();
  if (kind === 'code') {
    return new ApiError('mfa_code_invalid', { detail: 'The code is not correct, or was already used' });
  }
  return new ApiError('passkey_invalid', { detail: 'The passkey could not be verified' });
}

function auditWrongProof(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  kind: ProofKind,
  purpose: string,
) {
  const method = { password: 'password', code: 'mfa_code', passkey: 'passkey' }[kind];
  const reason = { password: 'invalid_credentials', code: 'mfa_code_invalid', passkey: 'passkey_invalid' }[
    kind
  ];
  return recordAudit(ctx.db, {
    action: 'login.failure',
    outcome: 'failure',
    actor: { type: 'user', id: user.id },
    target: { type: 'user', id: user.id },
    client,
    details: { method, reason, purpose },
  });
}
