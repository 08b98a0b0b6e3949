import { type Languages, lookupOne, type MessageKey } from '../i18n/index.ts';
import { formatReadableUtc } from './templates.ts';

/** What a mail template needs of its language (docs/languages.md, "Mails"). */
export interface MailLanguage {
  /** The catalog's tag: `<html lang>`, `Content-Language`, `?lang=` on the mail's links. */
  readonly tag: string;
  readonly dir: 'ltr' | 'rtl';
  t(key: MessageKey, values?: Readonly<Record<string, string | number>>): string;
  /** A date and time in UTC, the zone named. */
  date(date: Date): string;
}

/**
 * The language of a mail (API §24): its recipient's `locale`, else the language of the request that
 * caused it (found like a page's), else DEFAULT_LOCALE.
 */
export function mailLanguage(
  languages: Languages,
  recipientLocale: string | null | undefined,
  request?: { cookie: string | null; acceptLanguage: string | null } | null,
): MailLanguage {
  const tag =
    (recipientLocale ? lookupOne(recipientLocale, languages.tags) : null) ??
    languages.negotiate({ cookie: request?.cookie ?? null, acceptLanguage: request?.acceptLanguage ?? null });
  return {
    tag,
    dir: languages.dir(tag),
    t: (key, values) => languages.t(tag, key, values),
    // English keeps its hand-written form ("Friday, 28 November 2025, 14:30 UTC"): stable across
    // Node's ICU versions, as the mails always had it. Every other language through Intl.
    date: (date) => (tag === 'en' ? formatReadableUtc(date) : languages.date(tag, date)),
  };
}

/** A link of a mail with `?lang=`, so the page it opens speaks the mail's language. */
export function withLang(url: string, tag: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('lang', tag);
  return parsed.href;
}
