import { parseCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ModuleName } from '../../kernel/module-state.ts';
import type { Config } from '../../platform/config.ts';
import { type Languages, loadLanguages, type MessageKey } from '../../platform/i18n/index.ts';
import { messagesFile, type PageAssets } from './assets.ts';

/** The language picker's cookie (docs/languages.md): set by web/lib.js, read by every page. */
export const LANG_COOKIE = 'gatehouse_lang';

/**
 * A page request's language (docs/api.md §24): the interaction's `ui_locales` when the page belongs
 * to one, `?lang=`, the picker's cookie, `Accept-Language`, DEFAULT_LOCALE. The signed-in user's
 * `locale` reaches the pages as the cookie, which signing in sets (web/lib.js).
 */
export function requestLanguage(
  languages: Languages,
  req: FastifyRequest,
  uiLocales?: string | null,
): string {
  const query = (req.query as Record<string, unknown> | undefined)?.lang;
  return languages.negotiate({
    uiLocales: uiLocales ?? null,
    query: typeof query === 'string' ? query : null,
    cookie: parseCookie(req.headers.cookie ?? '')[LANG_COOKIE] ?? null,
    acceptLanguage: req.headers['accept-language'] ?? null,
  });
}

/** `{{t key}}` in a fragment: the message in the page's language (HTML-escaped; `{app}` is APP_NAME). */
const MESSAGE = /\{\{t ([a-z0-9_.-]+)\}\}/g;

/** Escapes text for HTML content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The path PUBLIC_URL puts in front of every page and API path ('' at the origin's root). */
export function basePath(config: Config): string {
  return new URL(config.publicUrl).pathname.replace(/\/+$/, '');
}

/**
 * The pages' Content-Security-Policy (docs/api.md §15): scripts, styles and connections from this origin
 * only, no inline code of any kind, no plugins, no framing. `blob:` images: the TOTP QR code is shown
 * from an object URL of the SVG the API returns. A logo on another https origin is the one exception
 * an operator can add (APP_LOGO_URL).
 */
export function pageCsp(config: Config): string {
  const logo = config.pages.logoUrl;
  const logoOrigin = logo !== null && !logo.startsWith('/') ? ` ${new URL(logo).origin}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' blob:${logoOrigin}`,
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "manifest-src 'none'",
  ].join('; ');
}

export interface PageRenderer {
  /** The URL prefix of the current assets, e.g. `/account/assets/3f2a9c01d4e5/`. */
  readonly assetBase: string;
  /**
   * Sends one page: the shell (header, skip link, stylesheet, the page's module script) around the
   * fragment `web/<fragment>.html`. Pages are never cached: some URLs carry a link token, and the
   * enabled modules (which sections show) can change at run time.
   */
  send(
    reply: FastifyReply,
    page: {
      title: string;
      /** The title's message key; without one, `title` is shown as given. */
      titleKey?: MessageKey;
      /** The authorization request's `ui_locales`, for the pages of its interaction. */
      uiLocales?: string | null;
      fragment: string;
      script: string;
      /** A page's own stylesheet after style.css (the console's admin.css). */
      stylesheet?: string;
      modules: readonly ModuleName[];
      /** Settings a page's script shows, as `data-<name>` on the body (no secrets: the page is public). */
      data?: Readonly<Record<string, string>>;
    },
  ): FastifyReply;
}

/** The page's own path and query without `lang`, where the picker returns to. */
export function returnPath(url: string): string {
  const parsed = new URL(url, 'http://page.invalid');
  parsed.searchParams.delete('lang');
  return `${parsed.pathname}${parsed.search}`;
}

/**
 * The renderer of one set of pages; `assetPath` their assets' route, `languagePath` the picker's
 * (languageEndpoint), both below PUBLIC_URL's path.
 */
export function createPageRenderer(
  config: Config,
  assets: PageAssets,
  assetPath: string,
  languagePath = '/account/language',
): PageRenderer {
  const base = basePath(config);
  const assetBase = `${base}${assetPath}/${assets.version}/`;
  const csp = pageCsp(config);
  const languages = loadLanguages(config);
  // The fragments with their messages, per language: a page's HTML changes with nothing else.
  const rendered = new Map<string, string>();
  const fragmentIn = (lang: string, fragment: string): string => {
    const key = `${lang} ${fragment}`;
    let html = rendered.get(key);
    if (html === undefined) {
      html = assets
        .fragment(fragment)
        // A long page (the console) keeps its views in several fragments: `{{include admin-webhooks}}`.
        .replace(/\{\{include ([a-z0-9-]+)\}\}/g, (_m, name: string) => assets.fragment(name))
        .replace(
          MESSAGE, // A fragment's `data-i18n` keys are found at run time: test/i18n/catalogs.test.ts checks them.
          (_m, id: string) => escapeHtml(languages.t(lang, id as MessageKey, { app: config.appName })),
        )
        .replaceAll('{{app_name}}', appName)
        .replaceAll('{{base}}', escapeHtml(base));
      rendered.set(key, html);
    }
    return html;
  };
  const pickers = new Map<string, string>();
  const pickerIn = (lang: string): string => {
    let html = pickers.get(lang);
    if (html === undefined) {
      const options = languages.tags
        .map(
          (tag) =>
            `<option value="${escapeHtml(tag)}" lang="${escapeHtml(tag)}" dir="${languages.dir(tag)}"${tag === lang ? ' selected' : ''}>${escapeHtml(languages.name(tag))}</option>`,
        )
        .join('');
      html = `<form class="lang-picker" method="get" action="${escapeHtml(base)}${languagePath}"><label for="gh-lang">${escapeHtml(languages.t(lang, 'shell.language'))}</label><select id="gh-lang" name="lang">${options}</select><button type="submit" class="secondary" id="gh-lang-apply">${escapeHtml(languages.t(lang, 'shell.language_apply'))}</button>`;
      pickers.set(lang, html);
    }
    return html;
  };
  const appName = escapeHtml(config.appName);
  const logo = config.pages.logoUrl;
  const logoSrc = logo === null ? null : escapeHtml(logo.startsWith('/') ? `${base}${logo}` : logo);
  const logoImg = logoSrc === null ? '' : `<img class="logo" src="${logoSrc}" alt="">`;
  const theme =
    config.pages.accentColor === null ? '' : `<link rel="stylesheet" href="${assetBase}theme.css">`;

  return {
    assetBase,
    send(reply, page) {
      const lang = requestLanguage(languages, reply.request, page.uiLocales);
      const main = fragmentIn(lang, page.fragment);
      const title =
        page.titleKey === undefined ? page.title : languages.t(lang, page.titleKey, { app: config.appName });
      const extra =
        page.stylesheet === undefined ? '' : `<link rel="stylesheet" href="${assetBase}${page.stylesheet}">`;
      const data = Object.entries(page.data ?? {})
        .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
        .join('');
      const html = `<!doctype html>
<html lang="${lang}" dir="${languages.dir(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · ${appName}</title>
<link rel="icon" href="${assetBase}icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${assetBase}style.css">${extra}${theme}
<script type="module" src="${assetBase}${page.script}"></script>
<link rel="modulepreload" href="${assetBase}${messagesFile(lang)}">
</head>
<body data-base="${escapeHtml(base)}" data-app-name="${appName}" data-lang="${lang}" data-modules="${page.modules.join(' ')}"${data}>
<a class="skip-link" href="#main">${escapeHtml(languages.t(lang, 'shell.skip'))}</a>
<header class="site"><a class="brand" href="${escapeHtml(base)}/account">${logoImg}<span>${appName}</span></a>${pickerIn(lang)}<input type="hidden" name="next" value="${escapeHtml(returnPath(reply.request.url))}"></form></header>
<main id="main" tabindex="-1">
${main}
</main>
</body>
</html>
`;
      return reply
        .status(200)
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-language', lang)
        .header('vary', 'Accept-Language, Cookie')
        .header('content-security-policy', csp)
        .header('cache-control', 'no-store')
        .header('cross-origin-opener-policy', 'same-origin')
        .header('x-robots-tag', 'noindex, nofollow')
        .send(html);
    },
  };
}
