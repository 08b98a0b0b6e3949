// What other features use of this one: they import it from here, never from its inner files
// (docs/architecture.md, "The dependency rule").

export { loadPageAssets } from './assets.ts';
export { cookiesInsecure, refreshCookie } from './browser-session.ts';
export { ASSET_PATH } from './pages.routes.ts';
export { createPageRenderer, escapeHtml } from './shell.ts';
