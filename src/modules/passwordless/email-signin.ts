import { randomInt, timingSafeEqual } from 'node:crypto';
import type { SecretsKey } from '../../identity/tokens/secrets-key.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';

/*
 * The pieces of §20's pair shared by the request and the verification: the code, its keyed hash,
 * the link's address and the one refusal.
 */

/** docs/api.md §20: a code allows 5 tries, then dies with its link. */
export const CODE_MAX_TRIES = 5;

/** The hosted page a sign-in link opens (docs/api.md §15, §20); it signs in on a click, never on load. */
export function signInLinkUrl(ctx: AppContext, token: string): string {
  return `${ctx.config.publicUrl}/account/sign-in/email/${token}`;
}

/** Six random digits (uniform, leading zeros kept). */
export function newSignInCode(): string {
  return randomInt(0, 1_000_000).toString().padStart(6, '0');
}

/** The stored form of a code: an HMAC under SECRETS_KEY, bound to the user (a row copied elsewhere matches nothing). */
export function signInCodeHash(key: SecretsKey, userId: string, code: string): string {
  return key.hash(`email-signin:${userId}:${code}`);
}

/** Whether a typed code matches a stored hash (constant time over the hash). */
export function codeMatches(key: SecretsKey, userId: string, typed: string, stored: string): boolean {
  if (!/^\d{6}$/.test(typed)) return false;
  const a = Buffer.from(signInCodeHash(key, userId, typed));
  const b = Buffer.from(stored);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The server key codes are hashed under, or 503 `unavailable` (PostgreSQL without SECRETS_KEY). Asked
 * before any address is looked at, so the refusal says nothing about accounts.
 */
export function signInKey(ctx: AppContext): SecretsKey {
  const key = ctx.secrets.key();
  if (!key) {
    throw new ApiError('unavailable', { detail: 'Sign-in by e-mail needs SECRETS_KEY on this deployment' });
  }
  return key;
}

/** The one refusal of every failed e-mail sign-in: wrong, expired or used code or link, unknown address. */
export function signInRefused(): ApiError {
  return new ApiError('invalid_credentials', {
    detail: 'The code or link is not correct, has expired or was already used',
  });
}
