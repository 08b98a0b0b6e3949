// Dot-atom local part (RFC 5322 atext) and an ASCII host name of at least two labels. Unicode is
// refused on purpose: look-alike characters would let two visually equal addresses be two accounts
// (international domains are accepted in their punycode form, xn--…).
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

// Printable ASCII, checked before any case folding.
const ASCII = /^[\x21-\x7e]*$/;

/**
 * The stored, comparable form of an email (docs/api.md §5): trimmed, local part and domain lower-cased.
 * Returns null when the value is not an address Gatehouse accepts.
 *
 * Only ASCII is folded, and only after the value is known to be ASCII: JavaScript's full Unicode
 * lower-casing would turn `\u212Aate@…` (KELVIN SIGN) into `kate@…`, merging two different
 * addresses into one account. Mail systems treat ASCII case as equal; nothing else.
 */
export function normalizeEmail(input: string): string | null {
  const trimmed = input.trim();
  if (!ASCII.test(trimmed)) return null;
  const email = trimmed.toLowerCase();
  if (email.length > 254 || email.indexOf('@') > 64) return null;
  return EMAIL.test(email) ? email : null;
}

/**
 * True when NFKC normalization would change the value (docs/api.md §5): compatibility characters
 * (full-width letters, ligatures) and characters with a canonical equivalent. Compared with the
 * value itself, not with its NFC form: KELVIN SIGN decomposes canonically to `K`, so NFC changes it
 * as much as NFKC does and "NFKC ≠ NFC" would let it through. Such an address is refused, never folded.
 */
export function hasCompatibilityCharacters(value: string): boolean {
  return value.normalize('NFKC') !== value;
}
