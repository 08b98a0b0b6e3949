import { hashOpaqueToken } from '../../../identity/tokens/opaque-tokens.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import type { Db } from '../../../platform/db/schema.ts';
import { CLOCK_TOLERANCE_S, tokenInvalid } from './id-token.ts';
import { deleteExpiredIdTokenUses, reserveIdTokenUse } from './replay.queries.ts';

/*
 * "An ID token signs in once" (docs/api.md §16). The sign-in reserves the token inside its own
 * transaction, before any other write: a refusal later in that transaction (409, 403) rolls the
 * reservation back, so a refused token is not recorded, while an accepted one (a token response, or
 * 403 `mfa_required`, which commits) is. The row lives in the shared database, so a token used on
 * one instance is refused on every other.
 */

/**
 * The key a used token is remembered by: the SHA-256 of its signing input (header.payload), not of
 * the whole string. The signature segment is malleable without the key: base64url's spare bits in
 * its last character decode to the same bytes, and an ECDSA signature (r, s) also verifies as
 * (r, n − s). Header and payload cannot change without breaking the signature.
 */
export function idTokenUseKey(idToken: string): string {
  return hashOpaqueToken(idToken.slice(0, idToken.lastIndexOf('.')));
}

/** Reserves a verified ID token until its `exp` plus the clock tolerance; a second use is 401 `idp_token_invalid`. */
export async function reserveIdToken(db: Db, idToken: string, expiresAt: number): Promise<void> {
  const first = await reserveIdTokenUse(db, idTokenUseKey(idToken), expiresAt + CLOCK_TOLERANCE_S * 1000);
  if (!first) throw tokenInvalid('replay', 'this ID token has already been used to sign in');
}

/** Deletes the used-token records past their expiry (run on the idp module's timer); returns how many. */
export function pruneIdTokenUses(ctx: AppContext, now = Date.now()): Promise<number> {
  return deleteExpiredIdTokenUses(ctx.db, now);
}
