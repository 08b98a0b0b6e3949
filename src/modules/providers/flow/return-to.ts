import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { INTERACTION_PATH, isLiveInteraction, OAUTH_ROUTES } from '../../oauth/index.ts';

/** A path naming a pending authorization: the hosted interaction page, or the library's resume. */
const AUTHORIZATION_PATH = new RegExp(
  `^(?:${INTERACTION_PATH}|${OAUTH_ROUTES.authorization})/([A-Za-z0-9_-]+)(?:[/?#]|$)`,
);

/**
 * `return_to` of docs/api.md §18, to the letter. The query string has decoded it once already; a value
 * that still holds `%` or any `\` is refused (no second decoding anywhere can turn it into something
 * else), as is one that does not start with a single `/`, holds `//`, `/\` or a control character, or
 * leaves PUBLIC_URL's origin. A path naming an authorization request (`/oauth2/authorize/<uid>`, or
 * the hosted page of that interaction, `/account/authorize/<uid>`) must name a live one: an unknown,
 * expired or finished interaction is refused like any other bad value. Absent: the account page.
 * Returns the path to continue to, with PUBLIC_URL's base path in front.
 */
export async function checkReturnTo(ctx: AppContext, value: string | undefined): Promise<string> {
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
  const kept = base !== '' && (path === base || path.startsWith(`${base}/`)) ? path : `${base}${path}`;
  const uid = AUTHORIZATION_PATH.exec(kept.slice(base.length))?.[1];
  if (uid !== undefined && !(await isLiveInteraction(ctx, uid)))
    throw refuse('names an authorization request that is unknown, expired or already finished');
  return kept;
}
