import { secretFormat } from '../../platform/secret-format.ts';

/*
 * The key format (docs/api-keys.md): `gate_`, 32 random base62 characters (190 bits), then 6 base62
 * characters of the CRC-32 of everything before them (32 bits). Secret scanners match it with KEY_REGEX;
 * a mistyped or invented key fails the checksum and is refused without a database read. The format
 * itself is shared with SCIM tokens (src/platform/secret-format.ts).
 */

const FORMAT = secretFormat('gate_');

/** The one prefix every key starts with. */
export const KEY_PREFIX = FORMAT.prefix;
/** How many characters of a key are kept and shown (`prefix` of the key object). */
export const SHOWN_CHARS = 12;

/** Every key matches this, and only strings of this shape can be keys. */
export const KEY_REGEX = FORMAT.regex;
/** The same, for secret scanners (unanchored, word-bounded). */
export const KEY_SCAN_REGEX = FORMAT.scanRegex;

/** A new key: shown once, then only its hash is kept. */
export const newKey = FORMAT.create;

/** Whether a string is shaped like a key and its checksum holds: no database read needed. */
export const wellFormedKey = FORMAT.wellFormed;

/** Whether a bearer token is meant as a key (rather than an access token). */
export function looksLikeKey(token: string): boolean {
  return token.startsWith(KEY_PREFIX);
}

export { hashSecret as hashKey, sameHash } from '../../platform/secret-format.ts';
