// Dot-atom local part (RFC 5322 atext) and an ASCII host name of at least two labels. Unicode is
// refused on purpose: look-alike characters would let two visually equal addresses be two accounts
// (international domains are accepted in their punycode form, xn--…).
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The stored, comparable form of an email (docs/api.md §5): trimmed, local part and domain lower-cased.
 * Returns null when the value is not an address Gatehouse accepts.
 */
export function normalizeEmail(input: string): string | null {
  const email = input.trim().toLowerCase();
  if (email.length > 254 || email.indexOf('@') > 64) return null;
  return EMAIL.test(email) ? email : null;
}
