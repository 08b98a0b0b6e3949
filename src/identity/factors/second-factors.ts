import type { Kysely, Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { DB } from '../../platform/db/schema.ts';
import { revokeUserSessions } from '../sessions.ts';
import type { SecretsKey } from '../tokens/secrets-key.ts';
import { findHeldFactors } from './census.queries.ts';
import { type SecondFactorMethod, secondFactorUnavailable, usableSecondFactors } from './census.ts';
import {
  acceptTotpStep,
  consumeRecoveryCode,
  countRecoveryCodes,
  deleteRecoveryCodes,
  findTotp,
  replaceRecoveryCodes,
} from './second-factors.queries.ts';
import { matchingStep, newRecoveryCodes, normalizeRecoveryCode } from './totp.ts';

type Db = Kysely<DB> | Transaction<DB>;

export type { SecondFactorMethod } from './census.ts';

/**
 * The one answer to "what second factors does this user have?" — login, identity-provider sign-in
 * and password reset all ask here. Empty: no second factor is asked for. Which held factors count
 * depends on the modules (TOTP needs `mfa`, its endpoint completes the sign-in; a passkey needs
 * `mfa` and `passkeys`); an account whose every factor is switched off does not fall back to fewer
 * factors: 403 `second_factor_unavailable` (docs/api.md §16; the rule is usableSecondFactors).
 */
export async function secondFactors(ctx: AppContext, db: Db, userId: string): Promise<SecondFactorMethod[]> {
  const held = await findHeldFactors(db, userId);
  const on = { mfa: ctx.modules.isEnabled('mfa'), passkeys: ctx.modules.isEnabled('passkeys') };
  const methods = usableSecondFactors(held, on);
  if (methods === null) throw secondFactorUnavailable();
  return methods;
}

/** The key, or 503 when the module was switched on where no key can be had (docs/api.md §9 `unavailable`). */
export function requireSecretsKey(ctx: AppContext): SecretsKey {
  const key = ctx.secrets.key();
  if (!key)
    throw new ApiError('unavailable', { detail: 'Second factors need SECRETS_KEY on this deployment' });
  return key;
}

/** The user's confirmed TOTP secret, decrypted; null when there is none. */
export async function confirmedTotpSecret(ctx: AppContext, db: Db, userId: string): Promise<Buffer | null> {
  const row = await findTotp(db, userId);
  if (!row || row.confirmed_at === null) return null;
  const secret = requireSecretsKey(ctx).open(row.secret_box, totpContext(userId));
  if (!secret)
    throw new Error('TOTP secret cannot be opened: SECRETS_KEY differs from the one that sealed it');
  return secret;
}

/** The associated data a TOTP secret is sealed with: a box copied to another user does not open. */
export function totpContext(userId: string): string {
  return `totp:${userId}`;
}

/** The stored hash of a recovery code (keyed, and bound to the user). */
export function recoveryCodeHash(key: SecretsKey, userId: string, canonical: string): string {
  return key.hash(`recovery:${userId}:${canonical}`);
}

/**
 * Checks a TOTP or recovery code and, when it is good, spends it in the caller's transaction: a TOTP
 * step by the compare-and-set of the replay guard, a recovery code by its one conditional write.
 * Returns the amr value it proves (`otp`, or `mfa` for a recovery code), or null. The caller has
 * already reserved the attempt (login throttle, mfa_token tries).
 */
export async function spendCode(
  ctx: AppContext,
  trx: Db,
  userId: string,
  code: string,
): Promise<'otp' | 'mfa' | null> {
  const typed = code.trim();
  if (/^\d{6}$/.test(typed)) {
    const secret = await confirmedTotpSecret(ctx, trx, userId);
    if (!secret) return null;
    const step = matchingStep(secret, typed);
    if (step === null) return null;
    return (await acceptTotpStep(trx, userId, step)) ? 'otp' : null;
  }
  const canonical = normalizeRecoveryCode(typed);
  if (canonical === null) return null;
  const hash = recoveryCodeHash(requireSecretsKey(ctx), userId, canonical);
  return (await consumeRecoveryCode(trx, userId, hash, Date.now())) ? 'mfa' : null;
}

/** A new set of 10 recovery codes replaces the user's set; returns the codes (shown once). */
export async function regenerateRecoveryCodes(ctx: AppContext, trx: Db, userId: string): Promise<string[]> {
  const key = requireSecretsKey(ctx);
  const codes = newRecoveryCodes();
  const rows = codes.map((c) => ({
    id: uuidv7(),
    code_hash: recoveryCodeHash(key, userId, normalizeRecoveryCode(c) as string),
  }));
  await replaceRecoveryCodes(trx, userId, rows, Date.now());
  return codes;
}

/**
 * docs/api.md §13: the first factor a user adds issues recovery codes; a factor added while the user
 * holds codes issues none (undefined: `recovery_codes` stays out of the answer).
 */
export async function recoveryCodesForNewFactor(
  ctx: AppContext,
  trx: Db,
  userId: string,
): Promise<string[] | undefined> {
  if ((await countRecoveryCodes(trx, userId)) > 0) return undefined;
  return regenerateRecoveryCodes(ctx, trx, userId);
}

/**
 * Whether the account holds a second factor (a confirmed TOTP or a passkey), whatever the module
 * switches say; read in the caller's transaction before a new factor is stored.
 */
export async function holdsSecondFactor(db: Db, userId: string): Promise<boolean> {
  const held = await findHeldFactors(db, userId);
  return held.totp || held.passkeys > 0;
}

/**
 * docs/mfa.md "A new factor ends the other sessions": when the account's first second factor is
 * stored, every other session of the user (opened with the password alone) is revoked in the same
 * transaction, whatever the factor's kind, so none of them can mint recovery codes or act with the
 * password alone afterwards. `hadFactor` is holdsSecondFactor read before the factor was stored.
 * Returns how many sessions ended (0 for a later factor).
 */
export async function endSessionsForFirstFactor(
  trx: Db,
  userId: string,
  hadFactor: boolean,
  keepSessionId: string,
): Promise<number> {
  if (hadFactor) return 0;
  return revokeUserSessions(trx, userId, 'mfa_enabled', keepSessionId);
}

/**
 * After a passkey is removed: with no passkey left and no confirmed TOTP the account has no second
 * factor, and its recovery codes go too. True when they did.
 */
export async function dropRecoveryCodesWithoutFactors(
  db: Db,
  userId: string,
  passkeysLeft: number,
): Promise<boolean> {
  const totp = await findTotp(db, userId);
  const lastFactor = passkeysLeft === 0 && (totp === undefined || totp.confirmed_at === null);
  if (lastFactor) await deleteRecoveryCodes(db, userId);
  return lastFactor;
}
