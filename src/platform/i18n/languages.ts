import { IntlMessageFormat } from 'intl-messageformat';
import { ConfigError } from '../config/reader.ts';
import { quoted } from '../quoted.ts';
import { builtInCatalogs, type Catalog, operatorCatalogs } from './catalogs.ts';
import { type LanguageHints, nativeName, negotiate, textDirection } from './negotiate.ts';

type Values = Readonly<Record<string, string | number | Date>>;

/**
 * A message key: a key of locales/en.json, so a call naming a key English lacks fails the type check
 * (`npm run typecheck`), with no second list kept by hand. Keys found at run time (the pages'
 * `data-i18n` attributes) are checked by test/i18n/catalogs.test.ts instead.
 */
export type MessageKey = keyof typeof import('../../../locales/en.json', { with: { type: 'json' }});

/** The languages this service speaks: the catalogs, negotiation and formatting (docs/languages.md). */
export interface Languages {
  /** Every language served, built-in first, then those LOCALES_DIR adds. */
  readonly tags: readonly string[];
  /** DEFAULT_LOCALE, one of `tags`. */
  readonly defaultLocale: string;
  /** The language of a request or mail, first found in the settled order, else DEFAULT_LOCALE. */
  negotiate(hints: LanguageHints): string;
  /** One message formatted (ICU) in `tag`; missing there: DEFAULT_LOCALE's, then English's. */
  t(tag: string, key: MessageKey, values?: Values): string;
  dir(tag: string): 'ltr' | 'rtl';
  /** The language's name in itself, for the picker. */
  name(tag: string): string;
  /** A date and time in `tag`, in UTC, the zone named ("Friday, 28 November 2025 at 14:30:00 UTC"). */
  date(tag: string, date: Date): string;
  /**
   * The messages under `js.` (the page scripts') in `tag`, as the ICU syntax trees intl-messageformat
   * parsed, one JSON text: served as a page asset (messages-<tag>.js), formatted by web/i18n.js with `Intl`.
   */
  scriptMessages(tag: string): string;
}

export interface LanguageSettings {
  readonly defaultLocale: string;
  readonly localesDir: string | null;
}

const loaded = new Map<string, Languages>();

/**
 * The languages for these settings, checked once per process: an operator file with an unknown key
 * or a broken message, or a DEFAULT_LOCALE no catalog has, is a ConfigError (one line).
 */
export function loadLanguages(settings: LanguageSettings): Languages {
  const cacheKey = `${settings.defaultLocale}\n${settings.localesDir ?? ''}`;
  let languages = loaded.get(cacheKey);
  if (languages === undefined) {
    languages = build(settings);
    loaded.set(cacheKey, languages);
  }
  return languages;
}

function build(settings: LanguageSettings): Languages {
  const builtIn = builtInCatalogs();
  const english = builtIn.get('en') as Catalog;
  const catalogs = new Map<string, Catalog>(builtIn);
  if (settings.localesDir !== null) {
    for (const [tag, overrides] of operatorCatalogs(settings.localesDir, english)) {
      const known = [...catalogs.keys()].find((t) => t.toLowerCase() === tag.toLowerCase()) ?? tag;
      catalogs.set(known, { ...(catalogs.get(known) ?? {}), ...overrides });
    }
  }
  const tags = [...catalogs.keys()];
  const defaultLocale = tags.find((t) => t.toLowerCase() === settings.defaultLocale.toLowerCase());
  if (defaultLocale === undefined) {
    throw new ConfigError(
      `DEFAULT_LOCALE must name a built-in language or one LOCALES_DIR adds (${tags.join(', ')}), got ${quoted(settings.defaultLocale)}`,
    );
  }
  const formats = new Map<string, Map<string, IntlMessageFormat>>();
  const format = (tag: string, key: string): IntlMessageFormat => {
    let byKey = formats.get(tag);
    if (byKey === undefined) {
      byKey = new Map();
      formats.set(tag, byKey);
    }
    let found = byKey.get(key);
    if (found === undefined) {
      const text = catalogs.get(tag)?.[key] ?? catalogs.get(defaultLocale)?.[key] ?? english[key] ?? key;
      found = new IntlMessageFormat(text, tag);
      byKey.set(key, found);
    }
    return found;
  };
  const scripts = new Map<string, string>();
  const dates = new Map<string, Intl.DateTimeFormat>();
  return {
    tags,
    defaultLocale,
    negotiate: (hints) => negotiate(hints, tags, defaultLocale),
    t: (tag, key, values) => String(format(tag, key).format(values as Record<string, string>)),
    dir: textDirection,
    name: nativeName,
    date(tag, date) {
      let formatter = dates.get(tag);
      if (formatter === undefined) {
        formatter = new Intl.DateTimeFormat(tag, { dateStyle: 'full', timeStyle: 'long', timeZone: 'UTC' });
        dates.set(tag, formatter);
      }
      return formatter.format(date);
    },
    scriptMessages(tag) {
      let json = scripts.get(tag);
      if (json === undefined) {
        const asts: Record<string, unknown> = {};
        for (const key of Object.keys(english)) {
          if (key.startsWith('js.')) asts[key] = format(tag, key).getAst();
        }
        json = JSON.stringify(asts);
        scripts.set(tag, json);
      }
      return json;
    },
  };
}
