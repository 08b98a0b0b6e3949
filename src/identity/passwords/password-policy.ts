import { createRequire } from 'node:module';
import { breachedPasswords } from './breached-passwords.ts';

/** Longest password accepted (docs/api.md §5); longer ones are rejected, never truncated. */
export const PASSWORD_MAX_LENGTH = 256;

export type PasswordPolicyResult = { ok: true } | { ok: false; reason: string };

export interface PasswordPolicyOptions {
  minLength: number;
  email?: string;
  /**
   * Also refuse passwords in the breached-password filter (PASSWORD_BREACHED_CHECK,
   * docs/security.md "Breached passwords"). On unless set to false.
   */
  breachedCheck?: boolean;
}

// With the `u` flag a surrogate class only matches unpaired surrogates, which are not Unicode
// characters: they would be encoded to U+FFFD before hashing, so distinct inputs could collide.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Checks a new password against docs/api.md §5 (NIST SP 800-63B rev. 4, single-factor): length in
 * code points within [minLength, 256], not commonly used, not breached (unless `breachedCheck` is
 * false), not built around the email address.
 * The password is taken as given: no trimming, no normalisation. No composition rules.
 */
export function checkPasswordPolicy(password: string, opts: PasswordPolicyOptions): PasswordPolicyResult {
  const length = countCodePoints(password, PASSWORD_MAX_LENGTH + 1);
  if (length < opts.minLength) {
    return fail(`Password must be at least ${opts.minLength} characters long.`);
  }
  if (length > PASSWORD_MAX_LENGTH) {
    return fail(`Password must be at most ${PASSWORD_MAX_LENGTH} characters long.`);
  }
  if (LONE_SURROGATE.test(password)) {
    return fail('Password contains an invalid Unicode sequence (an unpaired surrogate).');
  }
  const lowered = password.toLowerCase();
  if (commonPasswords().has(lowered)) {
    return fail('Password is too common: it appears in a list of frequently used passwords. Choose another.');
  }
  const breached = opts.breachedCheck ?? true;
  if (breached && breachedPasswords().has(lowered)) {
    return fail(
      'Password is too common: it appears in a list of passwords exposed in data breaches. Choose another.',
    );
  }
  if (opts.email && builtAroundAddress(lowered, opts.email.trim().toLowerCase(), opts.minLength, breached)) {
    return fail(
      `Password is built around your email address: without the address and the part before the @ it must still be at least ${opts.minLength} characters long.`,
    );
  }
  return { ok: true };
}

/**
 * docs/api.md §5, context-specific words: a password built around the address is refused, however
 * long or short its local part. Every occurrence of the address and of its local part is taken out
 * (case-insensitively); what is left (runs of spaces as one, ends trimmed) must still be a password
 * of the minimum length, and not a common or breached one. So "ada", "ada@example.com", "ada2024ada2024!" and
 * "ada + a short suffix" are refused for ada@example.com, while "ada lovelace analytical engine
 * 1843" (the name one word among many) passes; and a one- or two-letter local part is held to the
 * same rule instead of being skipped.
 */
function builtAroundAddress(lowered: string, email: string, minLength: number, breached: boolean): boolean {
  const at = email.lastIndexOf('@');
  const local = at === -1 ? email : email.slice(0, at);
  let rest = lowered;
  for (const part of [email, local]) if (part) rest = rest.split(part).join(' ');
  if (rest === lowered) return false;
  const left = rest.replace(/\s+/g, ' ').trim();
  if (countCodePoints(left, minLength) < minLength || commonPasswords().has(left)) return true;
  return breached && breachedPasswords().has(left);
}

function fail(reason: string): PasswordPolicyResult {
  return { ok: false, reason };
}

/** Counts code points, stopping at `stopAt` so a huge input costs no more than a 257-character one. */
function countCodePoints(value: string, stopAt: number): number {
  let count = 0;
  for (const _codePoint of value) {
    count++;
    if (count >= stopAt) break;
  }
  return count;
}

/** A fixed word list that answers membership: the common-password list's shape in memory. */
export interface WordList {
  readonly size: number;
  has(word: string): boolean;
}

let commonPasswordList: WordList | undefined;

/**
 * The common-password list, loaded on first use. Source: `@zxcvbn-ts/language-common` (MIT)
 * 4.1.3, dictionary `passwords-common`, 49,233 entries, all lowercase ASCII. Upstream
 * (zxcvbn-ts/zxcvbn data-scripts/_generators/PasswordGenerator.ts) builds it from Mark Burnett's
 * 10 million password corpus (xato.net, 2015): lowercased, kept when seen more than 10 times,
 * minus entries that zxcvbn's pattern matchers (sequences, repeats, keyboard walks, dates) already
 * rate weaker than their rank — so a purely patterned password may be absent from this list.
 */
export function commonPasswords(): WordList {
  if (!commonPasswordList) {
    // A synchronous require keeps the policy check synchronous while still deferring the ~30 ms
    // decompression of the dictionary until a password is first checked.
    const require = createRequire(import.meta.url);
    const cached = new Set(Object.keys(require.cache));
    const pkg = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    commonPasswordList = sortedWordList(
      pkg.dictionary['passwords-common'].map((entry) => entry.toLowerCase()),
    );
    // The package's modules (this list as 49,233 strings, the diceware list, the decompressor)
    // would stay in the module cache for the life of the process: ~2.3 MB of heap nothing reads
    // again. A later require would simply load them afresh.
    for (const file of Object.keys(require.cache)) if (!cached.has(file)) delete require.cache[file];
  }
  return commonPasswordList;
}

/**
 * The words sorted and joined into one string, found by binary search: ~0.6 MB of heap where a
 * Set of the same 49,233 strings holds ~3 MB (docs/benchmarks.md, peak memory). A lookup costs
 * ~16 comparisons, nothing next to the argon2 hash that follows every accepted password.
 */
function sortedWordList(words: string[]): WordList {
  const sorted = [...new Set(words)].sort();
  const size = sorted.length;
  const text = sorted.join('\n');
  // starts[i] is where word i begins; starts[size] is one past the end of the last word.
  const starts = new Uint32Array(size + 1);
  let at = 0;
  sorted.forEach((word, i) => {
    starts[i] = at;
    at += word.length + 1;
  });
  starts[size] = at;
  const wordAt = (i: number) => text.slice(starts[i], (starts[i + 1] as number) - 1);
  return {
    size,
    has(word) {
      let lo = 0;
      let hi = size - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        const candidate = wordAt(mid);
        if (candidate === word) return true;
        if (candidate < word) lo = mid + 1;
        else hi = mid - 1;
      }
      return false;
    },
  };
}
