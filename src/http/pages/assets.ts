import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../platform/config.ts';
import { loadLanguages } from '../../platform/i18n/index.ts';

/** The page scripts' messages of one language, an ES module web/i18n.js imports (docs/languages.md). */
export function messagesFile(tag: string): string {
  return `messages-${tag.toLowerCase()}.js`;
}

/** One file the pages load, held in memory (they are few and small). */
export interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

/** The pages' static files (web/) and HTML fragments, loaded once at start. */
export interface PageAssets {
  /**
   * A hash of every served file: asset URLs carry it (`/account/assets/<version>/<file>`), so
   * they can be cached for a year and a new release is fetched at once.
   */
  readonly version: string;
  get(file: string): Asset | undefined;
  /** The HTML of `web/<name>.html`, inserted into a page's `<main>`. */
  fragment(name: string): string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** web/ beside src/ (running from source) or beside dist/ (the built service). */
function webDirectory(): string {
  for (const up of ['../../../web', '../../../../web']) {
    const dir = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(join(dir, 'style.css'))) return dir;
  }
  throw new Error('the pages directory web/ is missing next to the service');
}

/** The configured accent colour as CSS custom properties; the default palette lives in style.css. */
function themeCss(config: Config): string {
  const accent = config.pages.accentColor;
  if (accent === null) return '/* no APP_ACCENT_COLOR set: style.css defaults */\n';
  return `:root {\n  --accent: ${accent};\n}\n`;
}

export function loadPageAssets(config: Config): PageAssets {
  const dir = webDirectory();
  const files = new Map<string, Buffer>();
  const fragments = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    const ext = extname(name);
    if (ext === '.html') fragments.set(name.slice(0, -ext.length), readFileSync(join(dir, name), 'utf8'));
    else if (TYPES[ext] !== undefined) files.set(name, readFileSync(join(dir, name)));
  }
  files.set('theme.css', Buffer.from(themeCss(config)));
  const languages = loadLanguages(config);
  for (const tag of languages.tags) {
    files.set(messagesFile(tag), Buffer.from(`export default ${languages.scriptMessages(tag)};\n`));
  }

  const all = createHash('sha256');
  const assets = new Map<string, Asset>();
  for (const [name, body] of files) {
    const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16);
    all.update(name).update(hash);
    assets.set(name, { body, type: TYPES[extname(name)] as string, etag: `"${hash}"` });
  }
  return {
    version: all.digest('hex').slice(0, 12),
    get: (file) => assets.get(file),
    fragment(name) {
      const html = fragments.get(name);
      if (html === undefined) throw new Error(`web/${name}.html is missing`);
      return html;
    },
  };
}
