import { Type } from '@sinclair/typebox';
import { stringifySetCookie } from 'cookie';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { lookupOne } from '../../platform/i18n/index.ts';
import { type Endpoint, endpoint } from '../endpoint.ts';
import { basePath, LANG_COOKIE } from './shell.ts';

const LanguageQuery = Type.Object({
  lang: Type.String({ minLength: 1, maxLength: 35 }),
  next: Type.Optional(Type.String({ maxLength: 2048 })),
});

/** The picker's cookie, exactly as settled (docs/api.md §24): not HttpOnly, the page scripts need not read it. */
export function languageCookie(tag: string): string {
  return stringifySetCookie({
    name: LANG_COOKIE,
    value: tag,
    path: '/',
    maxAge: 31_536_000,
    sameSite: 'lax',
  });
}

/** A path on this service to return to: one leading `/`, never `//` or `/\` (another host). */
function safeNext(next: string | undefined): string | null {
  // Printable ASCII only (a URL's path and query as the page wrote it): no control character or
  // backslash a browser might read as another host.
  if (next === undefined || !/^\/(?![/\\])[!-[\]-~]*$/.test(next)) return null;
  return next;
}

/**
 * `GET <path>?lang=<tag>&next=<page>`: the language picker (docs/languages.md). Sets `gatehouse_lang`
 * and returns to the page (303); the page's script has already saved the choice as the signed-in
 * user's `locale`. A form without a script works the same. A tag no catalog serves is 400.
 */
export function languageEndpoint(
  ctx: AppContext,
  def: { group: string; path: string; home: string },
): Endpoint {
  const base = basePath(ctx.config);
  return endpoint({
    group: def.group,
    label: 'language',
    method: 'GET',
    path: def.path,
    access: 'public',
    hidden: true,
    summary: 'The language picker: sets the language cookie and returns to the page',
    schema: { hide: true, querystring: LanguageQuery },
    ownsReply: true,
    handler: (req, reply) => {
      const tag = lookupOne(req.query.lang, ctx.languages.tags);
      if (tag === null || tag.toLowerCase() !== req.query.lang.toLowerCase()) {
        throw new ApiError('validation_failed', {
          detail: `querystring/lang must be one of ${ctx.languages.tags.join(', ')}`,
        });
      }
      const next = safeNext(req.query.next) ?? def.home;
      return reply
        .status(303)
        .header('set-cookie', languageCookie(tag))
        .header('cache-control', 'no-store')
        .header('location', `${base}${next}`)
        .send();
    },
  });
}
