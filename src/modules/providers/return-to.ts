import type { AppContext } from '../../context.ts';
import { ApiError } from '../../errors.ts';

/**
 * `return_to` of docs/api.md §18, to the letter. The query string has decoded it once already; a value
 * that still holds `%` or any `\` is refused (no second decoding anywhere can turn it into something
 * else), as is one that does not start with a single `/`, holds `//`, `/\` or a control character, or
 * leaves PUBLIC_URL's origin. (A live `/oauth2/authorize/<uid>` interaction is on that origin, so the
 * same rule admits it.) Absent: the account page. Returns the path to continue to, with PUBLIC_URL's
 * base path in front.
 */
export function checkReturnTo(ctx: AppContext, value: string | undefined): string {
  const publicUrl = new URL(ctx.config.publicUrl);
  const base = publicUrl.pathname.replace(/\/+$/, '');
  if (value === undefined) return `${base}/account`;
  const refuse = (why: string) =>
    new ApiError('validation_failed', {
      detail: `return_to ${why}`,
      errors: [{ path: '/return_to', message: why }],
    });
  if (value.includes('%') || value.includes('\\')) throw refuse('must not hold "%" or "\\" after decoding');
  if (!value.startsWith('/') || value.startsWith('//'))
    throw refuse('must be a path starting with a single "/"');
  if (value.includes('//') || value.includes('/\\')) throw refuse('must not hold "//"');
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) throw refuse('must not hold control characters');
  }
  let target: URL;
  try {
    target = new URL(value, publicUrl.origin);
  } catch {
    throw refuse('is not a valid path');
  }
  if (target.origin !== publicUrl.origin) throw refuse("must stay on PUBLIC_URL's origin");
  const path = `${target.pathname}${target.search}${target.hash}`;
  // A PUBLIC_URL with a base path: a value already under it is kept, anything else is put under it.
  return base !== '' && (path === base || path.startsWith(`${base}/`)) ? path : `${base}${path}`;
}
