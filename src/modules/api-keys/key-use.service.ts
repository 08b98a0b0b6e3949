import { type AuthContext, keyCallerContext } from '../../http/guard.ts';
import { takeFromWindow } from '../../identity/budgets/sliding-window.ts';
import { findUserById, type PublicUser, toPublicUser } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { type ApiKeyRow, findKeyByHash, touchKey } from './api-keys.queries.ts';
import type { VerifyResponse } from './api-keys.schemas.ts';
import { hashKey, sameHash, wellFormedKey } from './key-format.ts';
import { scopesOf, toPublicKey } from './key-view.ts';
import { type OrganizationsPort, organizationsOf } from './organizations-port.ts';

/*
 * Using a key (docs/api.md §22): on Gatehouse's own API (the guard) and through api_keys.verify.
 * No cache: every use reads the key and its owner, so a revocation, a disable or a deletion is seen
 * by every instance on the very next request (well inside docs/api.md §16's 100 ms), and the
 * rate limit is one serialized transaction per use across instances.
 */

export type Refusal = 'invalid' | 'expired' | 'revoked' | 'owner_disabled' | 'rate_limited';

export type KeyCheck =
  | { ok: true; row: ApiKeyRow; user: UserRow | null; organization: Record<string, unknown> | null }
  | { ok: false; reason: Refusal; retryAfterS?: number };

const INVALID: KeyCheck = { ok: false, reason: 'invalid' };

/**
 * Checks a presented key and, when it is live and its owner active, counts the use on its rate
 * limit and records `last_used_at` (at most once a minute). A malformed or mistyped key is refused
 * before any database read (the checksum). `userKeysOnly`: an organization's key is `invalid`
 * (refused on /api/v1 before it counts).
 */
export async function checkKey(
  ctx: AppContext,
  orgs: OrganizationsPort,
  key: string,
  userKeysOnly: boolean,
): Promise<KeyCheck> {
  if (!wellFormedKey(key)) return INVALID;
  const hash = hashKey(key);
  const row = await findKeyByHash(ctx.db, hash);
  if (!row || !sameHash(row.key_hash, hash)) return INVALID;
  if (userKeysOnly && row.owner_type !== 'user') return INVALID;
  const now = Date.now();
  if (row.revoked_at !== null) return { ok: false, reason: 'revoked' };
  if (row.expires_at !== null && Number(row.expires_at) <= now) return { ok: false, reason: 'expired' };
  let user: UserRow | null = null;
  let organization: Record<string, unknown> | null = null;
  if (row.owner_type === 'user') {
    // Two plain statements, not one join: Kysely's aliased 27-column select cost more than both
    // on either engine (docs/benchmarks.md, "API keys").
    user = (await findUserById(ctx.db, row.owner_id)) ?? null;
    // A deleted owner's keys were revoked with it; a row left behind reads the same.
    if (user === null) return { ok: false, reason: 'revoked' };
    if (user.status !== 'active') return { ok: false, reason: 'owner_disabled' };
  } else {
    organization = await orgs.organization(ctx, row.owner_id);
    if (organization === null) return { ok: false, reason: 'revoked' };
  }
  if (row.rate_requests !== null && row.rate_window_s !== null) {
    const taken = await takeFromWindow(ctx.db, ctx.database.dialect, {
      key: `api_key:${row.id}`,
      limit: row.rate_requests,
      windowMs: row.rate_window_s * 1000,
    });
    if (!taken.ok)
      return {
        ok: false,
        reason: 'rate_limited',
        retryAfterS: Math.max(1, Math.ceil(taken.retryAfterMs / 1000)),
      };
  }
  if (row.last_used_at === null || Number(row.last_used_at) <= now - 60_000) {
    await touchKey(ctx.db, row.id, now);
    return { ok: true, row: { ...row, last_used_at: now }, user, organization };
  }
  return { ok: true, row, user, organization };
}

/** The guard's key authentication (wired by app.ts): the caller, or the 401/403/429 of docs/api.md §22. */
export async function authenticateKey(ctx: AppContext, token: string): Promise<AuthContext> {
  if (!ctx.modules.isEnabled('api_keys')) {
    // Kept, but authenticating nowhere while the module is off.
    throw new ApiError('token_invalid', { detail: 'API keys are not enabled' });
  }
  const check = await checkKey(ctx, organizationsOf(ctx), token, true);
  if (!check.ok) {
    switch (check.reason) {
      case 'expired':
        throw new ApiError('token_expired', { detail: 'This API key has expired' });
      case 'owner_disabled':
        throw new ApiError('account_disabled', { detail: "The key's owner is disabled" });
      case 'rate_limited':
        throw new ApiError('rate_limited', {
          detail: "This key's rate limit is spent",
          retryAfterS: check.retryAfterS ?? 1,
        });
      default:
        throw new ApiError('token_invalid', { detail: 'The API key is not valid' });
    }
  }
  return keyCallerContext(token, check.user!, { id: check.row.id, scopes: scopesOf(check.row) });
}

/** POST /api/v1/api-keys/verify (docs/api.md §22): the answer for a team's own API. */
export async function verifyKey(ctx: AppContext, caller: AuthContext, key: string): Promise<VerifyResponse> {
  // A key or an OAuth client's token reached here holding api_keys:verify (the guard checked it).
  if (caller.apiKey === null && caller.oauthClient === undefined && caller.user.role !== 'admin') {
    throw new ApiError('forbidden', {
      detail: 'Verifying keys needs an admin, or a key or token with api_keys:verify',
    });
  }
  const orgs = organizationsOf(ctx);
  const check = await checkKey(ctx, orgs, key, false);
  if (!check.ok) {
    return check.reason === 'rate_limited'
      ? { valid: false, reason: 'rate_limited', retry_after_s: check.retryAfterS ?? 1 }
      : { valid: false, reason: check.reason };
  }
  const { row, user, organization } = check;
  const owner: PublicUser | Record<string, unknown> = user ? toPublicUser(user) : organization!;
  return {
    valid: true,
    key: toPublicKey(row),
    owner: owner as PublicUser,
    scopes: scopesOf(row),
    roles: user ? await orgs.globalRoles(ctx, user.id) : [],
  };
}
