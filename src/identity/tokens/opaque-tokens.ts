import { createHash, randomBytes } from 'node:crypto';

/** A new opaque secret: 256 bits of randomness, base64url (refresh and invitation tokens). */
export function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The stored form of an opaque token. A fast hash is enough: the token has 256 bits of entropy, so
 * there is nothing to brute-force, and lookups by hash stay a single indexed equality.
 */
export function hashOpaqueToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
