// The page toolkit shared by the `pages` and `console` modules (src/modules/pages, src/modules/console):
// static assets, the HTML shell and the page routes' helpers. Those modules import it from here,
// never from its inner files (docs/architecture.md, "The dependency rule").
export { loadPageAssets } from './assets.ts';
export { cookiesInsecure, ownCookie, ownCookieValue, refreshCookie } from './browser-session.ts';
export { languageCookie, languageEndpoint } from './language.ts';
export { assetEndpoint, pageModules, usableModules } from './page-routes.ts';
export { createPageRenderer, escapeHtml, LANG_COOKIE, type PageRenderer, requestLanguage } from './shell.ts';
