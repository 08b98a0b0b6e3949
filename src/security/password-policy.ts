import { createRequire } from 'node:module';

/** Longest password accepted (API.md §5); longer ones are rejected, never truncated. */
export const PASSWORD_MAX_LENGTH = 256;

/**
 * Local parts shorter than this are not checked: a one- or two-character fragment ("jo",
 * "al") occurs by chance in a large share of good passphrases, so rejecting on it would turn
 * away strong passwords while adding almost nothing against guessing.
 */
export const EMAIL_LOCAL_PART_MIN_CHECK_LENGTH = 3;

export type PasswordPolicyResult = { ok: true } | { ok: false; reason: string };

export interface PasswordPolicyOptions {
  minLength: number;
  email?: string;
}

// With the `u` flag a surrogate class only matches unpaired surrogates, which are not Unicode
// characters: they would be encoded to U+FFFD before hashing, so distinct inputs could collide.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Checks a new password against API.md §5 (NIST SP 800-63B rev. 4, single-factor): length in
 * code points within [minLength, 256], not commonly used, not containing the email's local part.
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
  const localPart = emailLocalPart(opts.email);
  if (localPart && lowered.includes(localPart)) {
    return fail('Password must not contain the part of your email address before the @.');
  }
  return { ok: true };
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

function emailLocalPart(email: string | undefined): string | null {
  if (!email) return null;
  const at = email.lastIndexOf('@');
  const local = (at === -1 ? email : email.slice(0, at)).toLowerCase();
  return countCodePoints(local, EMAIL_LOCAL_PART_MIN_CHECK_LENGTH) >= EMAIL_LOCAL_PART_MIN_CHECK_LENGTH
    ? local
    : null;
}

let commonPasswordSet: Set<string> | undefined;

/**
 * The common-password list, loaded on first use. Source: `@zxcvbn-ts/language-common` (MIT)
 * 4.1.3, dictionary `passwords-common`, 49,233 entries, all lowercase ASCII. Upstream
 * (zxcvbn-ts/zxcvbn data-scripts/_generators/PasswordGenerator.ts) builds it from Mark Burnett's
 * 10 million password corpus (xato.net, 2015): lowercased, kept when seen more than 10 times,
 * minus entries that zxcvbn's pattern matchers (sequences, repeats, keyboard walks, dates) already
 * rate weaker than their rank — so a purely patterned password may be absent from this list.
 */
export function commonPasswords(): ReadonlySet<string> {
  if (!commonPasswordSet) {
    // A synchronous require keeps the policy check synchronous while still deferring the ~30 ms
    // decompression of the dictionary until a password is first checked.
    const require = createRequire(import.meta.url);
    const pkg = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    commonPasswordSet = new Set(pkg.dictionary['passwords-common'].map((entry) => entry.toLowerCase()));
  }
  return commonPasswordSet;
}
