import { createHash } from 'node:crypto';
import type { ErrorContext, KoaContextWithOIDC } from 'oidc-provider';
import { escapeHtml, loadPageAssets } from '../../../http/pages/index.ts';
import type { Config } from '../../../platform/config.ts';
import { loadLanguages, type MessageKey } from '../../../platform/i18n/index.ts';
import { ASSET_PATH } from '../../pages/index.ts';

/**
 * The pages oidc-provider would render (errors, logout and its success), written by
 * Gatehouse: no external requests, no inline style, a CSP of their own (docs/api.md §17).
 */
const CSP_BASE =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'";

/** The hosted pages' asset folder (its version changes with every release), computed once per config. */
const assetBases = new WeakMap<Config, string>();
function assetBase(config: Config): string {
  let found = assetBases.get(config);
  if (found === undefined) {
    const base = new URL(config.publicUrl).pathname.replace(/\/+$/, '');
    found = `${base}${ASSET_PATH}/${loadPageAssets(config).version}/`;
    assetBases.set(config, found);
  }
  return found;
}

/**
 * The hosted pages' look (src/http/pages/shell.ts: their stylesheet, header and card), without
 * their script: these pages are the library's, so they carry only what it needs.
 */
function page(config: Config, title: string, body: string, lang = 'en'): string {
  const assets = assetBase(config);
  const dir = loadLanguages(config).dir(lang);
  const appName = escapeHtml(config.appName);
  const theme = config.pages.accentColor === null ? '' : `<link rel="stylesheet" href="${assets}theme.css">`;
  return `<!doctype html>
<html lang="${lang}" dir="${dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)} · ${appName}</title>
<link rel="icon" href="${assets}icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${assets}style.css">${theme}</head>
<body><header class="site"><span class="brand"><span>${appName}</span></span></header>
<main id="main"><h1>${escapeHtml(title)}</h1><div class="card">${body}</div></main></body></html>`;
}

/**
 * The language of a page the library shows (API §24): the authorization request's `ui_locales`
 * when the page belongs to one, else the picker's cookie, `Accept-Language`, DEFAULT_LOCALE.
 */
function languageOf(config: Config, ctx: KoaContextWithOIDC): { lang: string; t: Translate } {
  const languages = loadLanguages(config);
  const uiLocales = ctx.oidc?.params?.ui_locales;
  const lang = languages.negotiate({
    uiLocales: typeof uiLocales === 'string' ? uiLocales : null,
    cookie: /(?:^|;\s*)gatehouse_lang=([^;]*)/.exec(ctx.get('cookie'))?.[1] ?? null,
    acceptLanguage: ctx.get('accept-language') || null,
  });
  return { lang, t: (key, values) => languages.t(lang, key, values) };
}
type Translate = (key: MessageKey, values?: Record<string, string>) => string;

function send(ctx: KoaContextWithOIDC, html: string, csp: string): void {
  ctx.type = 'html';
  ctx.set('content-security-policy', csp);
  ctx.set('cache-control', 'no-store');
  ctx.body = html;
}

/** An error the library cannot send back to a client (bad client_id or redirect_uri, and the like). */
export function renderError(config: Config) {
  return async (errorCtx: ErrorContext, out: Record<string, string>) => {
    const ctx = errorCtx as unknown as KoaContextWithOIDC;
    const { lang, t } = languageOf(config, ctx);
    // The library's own description stays as it wrote it (English, like every JSON body).
    const description = out.error_description ?? t('oidc.error.default');
    send(
      ctx,
      page(
        config,
        t('oidc.error.title'),
        `<p role="alert"><strong>${escapeHtml(out.error ?? 'error')}</strong>: ${escapeHtml(description)}</p>`,
        lang,
      ),
      `${CSP_BASE}; form-action 'none'`,
    );
  };
}

/** RP-initiated logout: Gatehouse's confirmation page; `form` is the library's hidden form. */
export function logoutSource(config: Config) {
  return async (ctx: KoaContextWithOIDC, form: string) => {
    const client = ctx.oidc.client as { clientName?: string; clientId: string } | undefined;
    const { lang, t } = languageOf(config, ctx);
    const question = client
      ? t('oidc.logout.question_client', {
          client: client.clientName ?? client.clientId,
          app: config.appName,
        })
      : t('oidc.logout.question', { app: config.appName });
    // The library's form has an id `op.logoutForm`; buttons outside it submit it by `form=`.
    send(
      ctx,
      page(
        config,
        t('oidc.logout.title'),
        `<p>${escapeHtml(question)}</p>${form}
<div class="actions"><button type="submit" form="op.logoutForm" name="logout" value="yes">${escapeHtml(t('oidc.logout.yes'))}</button>
<button type="submit" class="secondary" form="op.logoutForm">${escapeHtml(t('oidc.logout.no'))}</button></div>`,
        lang,
      ),
      // Browsers apply form-action to the redirect that follows the submission too: the registered
      // post_logout_redirect_uri the library validated is allowed, nothing else.
      `${CSP_BASE}; form-action 'self'${redirectOrigin(ctx)}`,
    );
  };
}

function redirectOrigin(ctx: KoaContextWithOIDC): string {
  const uri = ctx.oidc?.params?.post_logout_redirect_uri;
  if (typeof uri !== 'string') return '';
  try {
    return ` ${new URL(uri).origin}`;
  } catch {
    return '';
  }
}

export function postLogoutSuccessSource(config: Config) {
  return async (ctx: KoaContextWithOIDC) => {
    const { lang, t } = languageOf(config, ctx);
    send(
      ctx,
      page(config, t('oidc.signed_out.title'), `<p>${escapeHtml(t('oidc.signed_out.text'))}</p>`, lang),
      CSP_BASE,
    );
  };
}

/** The one script of the form_post page: it submits the form once the page is read. */
const AUTO_SUBMIT = "document.addEventListener('DOMContentLoaded',function(){document.forms[0].submit()});";
const AUTO_SUBMIT_HASH = `'sha256-${createHash('sha256').update(AUTO_SUBMIT).digest('base64')}'`;

const FORM = /<form method="post" action="([^"]*)">/;
const INPUT = /<input type="hidden" name="([^"]*)" value="([^"]*)"\/>/g;
const fromLibraryHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/**
 * The action and hidden fields of a page the library wrote to submit itself (its `form_post`
 * answer, a logout without a session), unescaped by its own rules; null for any other answer.
 */
export function autoSubmittedForm(ctx: KoaContextWithOIDC): { action: string; fields: string[][] } | null {
  if (typeof ctx.body !== 'string' || !String(ctx.type).startsWith('text/html')) return null;
  const form = FORM.exec(ctx.body);
  if (!form || !ctx.body.includes('document.forms[0].submit()')) return null;
  const matched = [...ctx.body.matchAll(INPUT)];
  // Every input read, or nothing: a field missed (say `code` or `state`) would post an incomplete answer.
  if (matched.length !== ctx.body.split('<input').length - 1) return null;
  return {
    action: fromLibraryHtml(form[1] ?? ''),
    fields: matched.map((m) => [fromLibraryHtml(m[1] ?? ''), fromLibraryHtml(m[2] ?? '')]),
  };
}

/**
 * The `form_post` answer (and the library's other auto-submitted forms: a logout without a
 * confirmation, a sign-in as another account) in Gatehouse's markup (docs/api.md §17). The library
 * has no hook for that page, so a post-middleware (its documented extension point) reads the
 * action and hidden fields the library wrote, escaped by its own rules, and writes Gatehouse's
 * page with them: the same fields, one script, and a CSP allowing exactly that script's hash. A
 * page it does not recognise is left as the library wrote it.
 */
export function formPostPages(config: Config) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    const read = autoSubmittedForm(ctx);
    if (!read) return;
    const inputs = read.fields
      .map(
        ([name, value]) =>
          `<input type="hidden" name="${escapeHtml(name ?? '')}" value="${escapeHtml(value ?? '')}">`,
      )
      .join('');
    const { lang, t } = languageOf(config, ctx);
    const html = page(
      config,
      t('oidc.form_post.title'),
      `<form method="post" action="${escapeHtml(read.action)}">${inputs}
<p>${escapeHtml(t('oidc.form_post.before'))} <button type="submit">${escapeHtml(t('oidc.form_post.continue'))}</button>${escapeHtml(t('oidc.form_post.after'))}</p></form>
<script>${AUTO_SUBMIT}</script>`,
      lang,
    );
    ctx.body = html;
    ctx.set('content-security-policy', `${CSP_BASE}; script-src ${AUTO_SUBMIT_HASH}`);
    ctx.set('cache-control', 'no-store');
  };
}
