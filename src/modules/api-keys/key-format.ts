import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/*
 * The key format (docs/api-keys.md): `gate_`, 32 random base62 characters (190 bits), then 6 base62
 * characters of the CRC-32 of everything before them (32 bits). Secret scanners match it with KEY_REGEX;
 * a mistyped or invented key fails the checksum and is refused without a database read.
 */

/** The one prefix every key starts with. */
export const KEY_PREFIX = 'gate_';
const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;
/** How many characters of a key are kept and shown (`prefix` of the key object). */
export const SHOWN_CHARS = 12;

/** Every key matches this, and only strings of this shape can be keys. */
export const KEY_REGEX = /^gate_[0-9A-Za-z]{38}$/;
/** The same, for secret scanners (unanchored, word-bounded). */
export const KEY_SCAN_REGEX = String.raw`\bgate_[0-9A-Za-z]{38}\b`;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const byte of randomBytes(n * 2)) {
      // 248 = 4 × 62: rejecting the rest keeps every character equally likely.
      if (byte < 248 && out.length < n) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  let v = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
    out = ALPHABET[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

/** A new key: shown once, then only its hash is kept. */
export function newKey(): string {
  const body = KEY_PREFIX + randomBase62(RANDOM_CHARS);
  return body + checksum(body);
}

/** Whether a string is shaped like a key and its checksum holds: no database read needed. */
export function wellFormedKey(candidate: string): boolean {
  if (!KEY_REGEX.test(candidate)) return false;
  const body = candidate.slice(0, -CHECKSUM_CHARS);
  const given = Buffer.from(candidate.slice(-CHECKSUM_CHARS));
  return timingSafeEqual(given, Buffer.from(checksum(body)));
}

/** Whether a bearer token is meant as a key (rather than an access token). */
export function looksLikeKey(token: string): boolean {
  return token.startsWith(KEY_PREFIX);
}

/** What is stored: the SHA-256 of the key (a 190-bit secret needs no slow hash), base64url. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/** Compares two stored hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
