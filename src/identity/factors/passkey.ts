import { type AuthenticationResponseJSON, verifyAuthenticationResponse } from '@simplewebauthn/server';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { Db, PasskeysTable, WebauthnChallengesTable } from '../../platform/db/schema.ts';
import {
  consumeChallenge,
  findPasskeyByCredential,
  insertChallenge,
  recordPasskeyUse,
} from './passkeys.queries.ts';
import type { PasskeyProof } from './proof.schemas.ts';

/** docs/api.md §13: a challenge lives 5 minutes. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

/** Stores the challenge of a ceremony and returns its id (any instance may answer the next step). */
export async function storeChallenge(
  ctx: AppContext,
  challenge: string,
  purpose: WebauthnChallengesTable['purpose'],
  userId: string | null,
): Promise<string> {
  const id = uuidv7();
  const now = Date.now();
  await insertChallenge(ctx.db, {
    id,
    challenge,
    purpose,
    user_id: userId,
    created_at: now,
    expires_at: now + CHALLENGE_TTL_MS,
    used_at: null,
  });
  return id;
}

/** The amr value of a credential (RFC 8176): `swk` for a synced (backed-up) one, `hwk` otherwise. */
export function passkeyAmr(backedUp: boolean): 'hwk' | 'swk' {
  return backedUp ? 'swk' : 'hwk';
}

/** An assertion whose signature checked out; its use is not recorded yet (`recordAssertion`). */
export interface CheckedAssertion {
  passkey: PasskeysTable;
  amr: 'hwk' | 'swk';
  userVerified: boolean;
  newCounter: number;
  backedUp: boolean;
}

/**
 * Checks an assertion: consumes its challenge (one conditional write of its own, committed whatever
 * the outcome: a challenge serves one attempt), finds the credential, checks it belongs to the
 * challenge's user (when the challenge names one) and to `expectedUserId`, and verifies signature,
 * origin, RP ID and flags with @simplewebauthn/server. Null on any failure (no oracle on which
 * check failed). The signature counter is not written here: `recordAssertion` does, in the caller's
 * transaction when the use must stand or fall with it (a password reset).
 */
export async function checkAssertion(
  ctx: AppContext,
  proof: PasskeyProof,
  purpose: 'login' | 'mfa' | 'reset' | 'reauth',
  requireUserVerification: boolean,
  expectedUserId?: string,
): Promise<CheckedAssertion | null> {
  const now = Date.now();
  const challenge = await consumeChallenge(ctx.db, proof.challenge_id, purpose, now);
  if (!challenge) return null;
  if (expectedUserId !== undefined && challenge.user_id !== expectedUserId) return null;
  const response = proof.response as unknown as AuthenticationResponseJSON;
  if (typeof response.id !== 'string' || response.id.length > 1024) return null;
  const passkey = await findPasskeyByCredential(ctx.db, response.id);
  if (!passkey) return null;
  if (challenge.user_id !== null && passkey.user_id !== challenge.user_id) return null;
  const handle = response.response?.userHandle;
  if (handle && handle !== Buffer.from(passkey.user_id).toString('base64url')) return null;
  const { rpId, origins } = ctx.config.webauthn;
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: [...origins],
      expectedRPID: rpId,
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: Number(passkey.counter),
        transports: JSON.parse(passkey.transports),
      },
      requireUserVerification,
    });
    if (!result.verified) return null;
    const info = result.authenticationInfo;
    return {
      passkey,
      amr: passkeyAmr(info.credentialBackedUp),
      userVerified: info.userVerified,
      newCounter: info.newCounter,
      backedUp: info.credentialBackedUp,
    };
  } catch (err) {
    ctx.log.info({ reason: err instanceof Error ? err.message : 'unknown' }, 'passkey assertion refused');
    return null;
  }
}

/**
 * Records the use of a checked assertion under the counter rule, by a compare-and-set in `db`;
 * false when another use of the credential got there first (a replay or a cloned authenticator).
 */
export function recordAssertion(db: Db, checked: CheckedAssertion): Promise<boolean> {
  const { passkey, newCounter, backedUp } = checked;
  return recordPasskeyUse(db, passkey.id, Number(passkey.counter), newCounter, backedUp, Date.now());
}

/** `checkAssertion` and `recordAssertion` at once, for a sign-in: null on any failure. */
export async function verifyAssertion(
  ctx: AppContext,
  proof: PasskeyProof,
  purpose: 'login' | 'mfa',
  requireUserVerification: boolean,
  expectedUserId?: string,
): Promise<CheckedAssertion | null> {
  const checked = await checkAssertion(ctx, proof, purpose, requireUserVerification, expectedUserId);
  if (checked === null || !(await recordAssertion(ctx.db, checked))) return null;
  return checked;
}

/**
 * A passkey offered while the `passkeys` module is off is not served: 404 `module_disabled`, as the
 * passkey endpoints answer, before anything else is looked at (no token try, no throttle attempt).
 * `instead` says where the caller learns what to send in its place.
 */
export function refuseWhilePasskeysOff(ctx: AppContext, instead: string): void {
  if (ctx.modules.isEnabled('passkeys')) return;
  throw new ApiError('module_disabled', {
    detail: `Passkeys are switched off on this service (module passkeys): leave passkey out; ${instead}`,
  });
}

/**
 * A passkey as the second factor of a sign-in with an mfa_token: user verification is not required
 * (docs/api.md §13), the credential must be the user's. Returns the amr value or null. (A password
 * reset checks its passkey in src/modules/mfa/reset-factor.ts, its use recorded in the reset.)
 */
export function passkeyFactor(
  ctx: AppContext,
  proof: PasskeyProof,
  purpose: 'mfa',
): (userId: string) => Promise<'hwk' | 'swk' | null> {
  return async (userId) => {
    if (!ctx.modules.isEnabled('passkeys')) return null;
    const verified = await verifyAssertion(ctx, proof, purpose, false, userId);
    return verified?.amr ?? null;
  };
}
