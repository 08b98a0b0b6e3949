/**
 * Language negotiation (docs/api.md §24, docs/languages.md): RFC 4647 lookup over the catalogs'
 * tags with the settled fallbacks. Pure functions: the pages, the console and the mails call them.
 */

/** The settled fallbacks: what a requested tag (or its truncation) means among the catalogs. */
const ALIASES: Readonly<Record<string, string>> = {
  pt: 'pt-BR',
  'pt-PT': 'pt-BR',
  zh: 'zh-Hans',
  'zh-CN': 'zh-Hans',
  'zh-SG': 'zh-Hans',
};
/** Traditional Chinese is not Simplified: these never fall back to zh-Hans (nor to `zh`). */
const NEVER = /^zh-(hant|tw|hk|mo)(-|$)/i;

/** A well-formed BCP 47 tag in its canonical form (`de-ch` → `de-CH`), or null. */
export function canonicalTag(tag: string): string | null {
  if (tag.length === 0 || tag.length > 35) return null;
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical ?? null;
  } catch {
    return null;
  }
}

/** `Accept-Language` as ranges in preference order (q-values honoured, q=0 and `*` dropped). */
export function parseAcceptLanguage(header: string | undefined): string[] {
  if (header === undefined || header.length > 1024) return [];
  const ranges: { tag: string; q: number; at: number }[] = [];
  header.split(',').forEach((part, at) => {
    const [range = '', ...params] = part.trim().split(';');
    let q = 1;
    for (const param of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(param);
      if (m) q = Number(m[1]);
    }
    const tag = range.trim();
    if (tag !== '' && tag !== '*' && q > 0) ranges.push({ tag, q, at });
  });
  // A stable sort: equal q-values keep the header's order.
  return ranges.sort((a, b) => b.q - a.q || a.at - b.at).map((r) => r.tag);
}

/** `ui_locales`: a space-separated preference list (OpenID Connect Core §3.1.2.1). */
export function parseUiLocales(value: string | undefined | null): string[] {
  if (typeof value !== 'string') return [];
  return value
    .split(' ')
    .filter((t) => t !== '')
    .slice(0, 20);
}

/**
 * RFC 4647 §3.4 lookup of one range among `supported` (case-insensitive), truncating from the end
 * and applying the settled aliases at each step; null when nothing matches.
 */
export function lookupOne(range: string, supported: readonly string[]): string | null {
  const canonical = canonicalTag(range);
  if (canonical === null || NEVER.test(canonical)) return null;
  const byLower = new Map(supported.map((s) => [s.toLowerCase(), s]));
  let subtags = canonical.split('-');
  while (subtags.length > 0) {
    const candidate = subtags.join('-');
    const found =
      byLower.get(candidate.toLowerCase()) ?? byLower.get((ALIASES[candidate] ?? '').toLowerCase());
    if (found !== undefined) return found;
    subtags = subtags.slice(0, -1);
    // RFC 4647: a single-letter subtag (an extension's singleton) is dropped with what follows it.
    if (subtags.length > 0 && (subtags.at(-1) ?? '').length === 1) subtags = subtags.slice(0, -1);
  }
  return null;
}

/** The first range of `ranges` that matches, in preference order; null when none does. */
export function lookup(ranges: readonly string[], supported: readonly string[]): string | null {
  for (const range of ranges) {
    const found = lookupOne(range, supported);
    if (found !== null) return found;
  }
  return null;
}

/** What a request offers, in the settled order (docs/api.md §24). */
export interface LanguageHints {
  /** The authorization request's `ui_locales`, for every page of its interaction. */
  readonly uiLocales?: string | null;
  /** `?lang=`: this page only. */
  readonly query?: string | null;
  /** The picker's cookie, `gatehouse_lang`. */
  readonly cookie?: string | null;
  /** The signed-in user's `locale`. */
  readonly userLocale?: string | null;
  readonly acceptLanguage?: string | null;
}

/** The first found of the hints, else `fallback` (DEFAULT_LOCALE). */
export function negotiate(hints: LanguageHints, supported: readonly string[], fallback: string): string {
  const one = (value: string | null | undefined) =>
    typeof value === 'string' ? lookupOne(value, supported) : null;
  return (
    lookup(parseUiLocales(hints.uiLocales), supported) ??
    one(hints.query) ??
    one(hints.cookie) ??
    one(hints.userLocale) ??
    lookup(parseAcceptLanguage(hints.acceptLanguage ?? undefined), supported) ??
    fallback
  );
}

/** Right to left for the scripts that are written so (Arabic, Hebrew, Persian, Urdu …). */
export function textDirection(tag: string): 'ltr' | 'rtl' {
  try {
    const locale = new Intl.Locale(tag).maximize();
    return ['Arab', 'Hebr', 'Thaa', 'Syrc', 'Nkoo', 'Adlm', 'Rohg'].includes(locale.script ?? '')
      ? 'rtl'
      : 'ltr';
  } catch {
    return 'ltr';
  }
}

/** A language's own name for itself ("Deutsch", "العربية", "简体中文"), first letter capitalised. */
export function nativeName(tag: string): string {
  let name = tag;
  try {
    name = new Intl.DisplayNames([tag], { type: 'language' }).of(tag) ?? tag;
  } catch {
    // An operator's tag Intl does not name: the tag itself.
  }
  return name.charAt(0).toLocaleUpperCase(tag) + name.slice(1);
}
