import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The breached-password list as a Bloom filter (docs/security.md, "Breached passwords"): SecLists'
 * most common million passwords from Mark Burnett's corpus, lowercased, those of 8 code points and
 * more (474,743 entries) in 1.1 MB, with a false-positive rate of about 1e-4. Built at development
 * time by scripts/breached-filter.mjs, which documents the file format; read here, never written.
 * A member is possibly in the list (1e-4 of other passwords are too); a non-member never is.
 */
export interface BloomFilter {
  /** The number of entries added. */
  readonly size: number;
  /** The bit positions set per entry (k) and the filter's size in bits (m). */
  readonly hashes: number;
  readonly bits: number;
  has(word: string): boolean;
}

const MAGIC = 'GHBF';
const HEADER = 16;
const FILE_NAME = 'breached-passwords.bloom';

/** Reads a filter written by scripts/breached-filter.mjs, refusing anything else. */
export function parseBloomFilter(bytes: Uint8Array): BloomFilter {
  const file = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (file.length < HEADER || file.toString('latin1', 0, 4) !== MAGIC || file.readUInt8(4) !== 1) {
    throw new Error('not a breached-password filter (format GHBF version 1)');
  }
  const k = file.readUInt8(5);
  const m = file.readUInt32LE(8);
  const size = file.readUInt32LE(12);
  if (k < 1 || k > 16 || m === 0 || m % 8 !== 0 || file.length !== HEADER + m / 8) {
    throw new Error('the breached-password filter is truncated or malformed');
  }
  return {
    size,
    hashes: k,
    bits: m,
    has(word: string): boolean {
      const digest = createHash('sha512').update(word, 'utf8').digest();
      for (let i = 0; i < k; i++) {
        const bit = digest.readUInt32LE(i * 4) % m;
        if (((file[HEADER + (bit >>> 3)] as number) & (1 << (bit & 7))) === 0) return false;
      }
      return true;
    },
  };
}

/** assets/ beside src/ (running from source) or beside dist/ (the built service), as web/ is found. */
export function breachedFilterPath(): string {
  const candidates = ['../../../assets/', '../../../../assets/'].map((up) =>
    fileURLToPath(new URL(up + FILE_NAME, import.meta.url)),
  );
  const found = candidates.find((path) => existsSync(path));
  if (!found)
    throw new Error(`the breached-password filter assets/${FILE_NAME} is missing next to the service`);
  return found;
}

let breachedList: BloomFilter | undefined;

/**
 * The breached-password filter, read on the first check of a new password and kept for the life of
 * the process: one 1.1 MB buffer outside the JavaScript heap, a lookup one SHA-512.
 */
export function breachedPasswords(): BloomFilter {
  breachedList ??= parseBloomFilter(readFileSync(breachedFilterPath()));
  return breachedList;
}
