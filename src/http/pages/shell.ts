import type { FastifyReply } from 'fastify';
import type { ModuleName } from '../../kernel/module-state.ts';
import type { Config } from '../../platform/config.ts';
import type { PageAssets } from './assets.ts';

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

export function createPageRenderer(config: Config, assets: PageAssets, assetPath: string): PageRenderer {
  const base = basePath(config);
  const assetBase = `${base}${assetPath}/${assets.version}/`;
  const csp = pageCsp(config);
  const appName = escapeHtml(config.appName);
  const logo = config.pages.logoUrl;
  const logoSrc = logo === null ? null : escapeHtml(logo.startsWith('/') ? `${base}${logo}` : logo);
  const logoImg = logoSrc === null ? '' : `<img class="logo" src="${logoSrc}" alt="">`;
  const theme =
    config.pages.accentColor === null ? '' : `<link rel="stylesheet" href="${assetBase}theme.css">`;

  return {
    assetBase,
    send(reply, page) {
      const main = assets
        .fragment(page.fragment)
        // A long page (the console) keeps its views in several fragments: `{{include admin-webhooks}}`.
        .replace(/\{\{include ([a-z0-9-]+)\}\}/g, (_m, name: string) => assets.fragment(name))
        .replaceAll('{{app_name}}', appName)
        .replaceAll('{{base}}', escapeHtml(base));
      const extra =
        page.stylesheet === undefined ? '' : `<link rel="stylesheet" href="${assetBase}${page.stylesheet}">`;
      const data = Object.entries(page.data ?? {})
        .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
        .join('');
      const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(page.title)} · ${appName}</title>
<link rel="icon" href="${assetBase}icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${assetBase}style.css">${extra}${theme}
<script type="module" src="${assetBase}${page.script}"></script>
</head>
<body data-base="${escapeHtml(base)}" data-app-name="${appName}" data-modules="${page.modules.join(' ')}"${data}>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site"><a class="brand" href="${escapeHtml(base)}/account">${logoImg}<span>${appName}</span></a></header>
<main id="main" tabindex="-1">
${main}
</main>
</body>
</html>
`;
      return reply
        .status(200)
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', csp)
        .header('cache-control', 'no-store')
        .header('cross-origin-opener-policy', 'same-origin')
        .header('x-robots-tag', 'noindex, nofollow')
        .send(html);
    },
  };
}
