import type { Kysely, Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { ApiError } from '../../platform/api-error.ts';
import type { DB } from '../../platform/db/schema.ts';
import { hashOpaqueToken, newOpaqueToken } from '../tokens/opaque-tokens.ts';
import type { SecondFactorMethod } from './census.ts';
import { findMfaToken, insertMfaToken } from './mfa-tokens.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

// The mfa_token: what a sign-in whose first factor passed carries to its second (docs/api.md §13).

/** docs/api.md §13: an mfa_token lives 5 minutes and allows 5 tries. */
export const MFA_TOKEN_TTL_MS = 5 * 60_000;
export const MFA_TOKEN_MAX_TRIES = 5;

/** Issues an mfa_token for a sign-in whose first factor (`pwd`, `fed`) succeeded; stored as a hash. */
export async function issueMfaToken(db: Db, userId: string, firstFactor: string): Promise<string> {
  const token = newOpaqueToken();
  const now = Date.now();
  await insertMfaToken(db, {
    id: uuidv7(),
    token_hash: hashOpaqueToken(token),
    user_id: userId,
    first_factor: firstFactor,
    created_at: now,
    expires_at: now + MFA_TOKEN_TTL_MS,
    tries: 0,
    used_at: null,
  });
  return token;
}

/** The 403 `mfa_required` answer with its extension members. */
export function mfaRequired(methods: SecondFactorMethod[], mfaToken?: string): ApiError {
  return new ApiError('mfa_required', {
    detail: 'A second factor is required to complete this sign-in',
    extensions: { ...(mfaToken !== undefined && { mfa_token: mfaToken }), methods },
  });
}

/** The user of a live mfa_token (unknown, used, expired or out of tries: 401 `mfa_token_invalid`). */
export async function liveMfaTokenUser(db: Db, mfaToken: string): Promise<string> {
  const token = await findMfaToken(db, hashOpaqueToken(mfaToken));
  const now = Date.now();
  if (!token || token.used_at !== null || token.expires_at <= now || token.tries >= MFA_TOKEN_MAX_TRIES) {
    throw new ApiError('mfa_token_invalid', {
      detail: 'The mfa_token is unknown, used, expired or out of tries',
    });
  }
  return token.user_id;
}
