import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/*
 * The scannable secret format shared by API keys (`gate_`, docs/api-keys.md) and SCIM tokens
 * (`gscim_`, docs/sso.md): a prefix, 32 random base62 characters (190 bits), then 6 base62
 * characters of the CRC-32 of everything before them (32 bits). Secret scanners match the prefix
 * and length; a mistyped or invented secret fails the checksum and is refused without a database read.
 */

const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;
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

/** One secret format: its prefix, its patterns, and how to make and check one. */
export interface SecretFormat {
  prefix: string;
  /** Every secret of this format matches it, and only strings of this shape can be one. */
  regex: RegExp;
  /** The same, for secret scanners (unanchored, word-bounded). */
  scanRegex: string;
  /** A new secret: shown once, then only its hash is kept. */
  create(): string;
  /** Whether a string is shaped like such a secret and its checksum holds: no database read needed. */
  wellFormed(candidate: string): boolean;
}

/** The format of secrets starting with `prefix` (letters and `_` only). */
export function secretFormat(prefix: string): SecretFormat {
  const tail = `[0-9A-Za-z]{${RANDOM_CHARS + CHECKSUM_CHARS}}`;
  const regex = new RegExp(`^${prefix}${tail}$`);
  return {
    prefix,
    regex,
    scanRegex: String.raw`\b${prefix}${tail}\b`,
    create: () => {
      const body = prefix + randomBase62(RANDOM_CHARS);
      return body + checksum(body);
    },
    wellFormed: (candidate) => {
      if (!regex.test(candidate)) return false;
      const body = candidate.slice(0, -CHECKSUM_CHARS);
      const given = Buffer.from(candidate.slice(-CHECKSUM_CHARS));
      return timingSafeEqual(given, Buffer.from(checksum(body)));
    },
  };
}

/** What is stored: the SHA-256 of the secret (a 190-bit secret needs no slow hash), base64url. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

/** Compares two stored hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
