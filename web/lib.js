// Shared by every page: the JSON API client with the browser session, and small UI helpers.
// The refresh token lives only in an HttpOnly cookie the server sets in cookie mode; the access
// token lives only in this module's memory (never in web storage). See docs/pages.md.

import { formatDate, has, lang, t, wirePicker } from './i18n.js';

export { formatDate, has, lang, t };

const data = document.body.dataset;
/** PUBLIC_URL's path ('' when Gatehouse is at the root of its origin). */
export const base = data.base ?? '';
/** The modules enabled when the page was served: sections of other modules stay hidden. */
export const modules = new Set((data.modules ?? '').split(' ').filter(Boolean));
export const appName = data.appName ?? 'Gatehouse';

/** An API refusal (problem+json, docs/api.md §9), or code `network` when the service was unreachable. */
export class Problem extends Error {
  constructor(status, body, retryAfter) {
    super(body?.detail ?? body?.title ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? (status === 0 ? 'network' : 'unavailable');
    this.body = body ?? {};
    this.retryAfter = retryAfter;
  }
}

let access = null;
let user = null;
let refreshTimer = 0;
let restoring = null;

/** The signed-in user as the last token answer gave it, or null. */
export function currentUser() {
  return user;
}

function setAccess(tokens) {
  access = tokens.access_token;
  user = tokens.user;
  clearTimeout(refreshTimer);
  // Refresh a minute before the access token expires; the cookie carries the refresh token.
  const seconds = Math.max(10, (tokens.expires_in ?? 900) - 60);
  refreshTimer = setTimeout(() => {
    restore().catch(() => {});
  }, seconds * 1000);
}

async function send(path, { method = 'GET', body, auth = false, cookie = false, bearer }) {
  // The pages' own language goes with every call: a mail a call causes is written in it (API §24).
  const headers = { accept: 'application/json', 'accept-language': lang };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (cookie) headers['x-gatehouse-session'] = 'cookie';
  if (auth && access) headers.authorization = `Bearer ${access}`;
  // An enrolment-only token (REQUIRE_MFA, docs/mfa.md): kept by its page, never as the session.
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  try {
    return await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new Problem(0, { code: 'network', detail: t('js.error.network') });
  }
}

/**
 * Calls the JSON API. `auth`: with the in-memory access token (restored from the cookie first when
 * there is none, and once more if the token has expired). `cookie`: cookie mode for the calls that
 * start, refresh or end the browser session. Resolves with the parsed body (null for 204).
 */
export async function api(path, options = {}) {
  if (options.auth && !access) await restore();
  let answer = await call(path, options);
  // Only an expired access token is worth a refresh; any other 401 (a wrong password) is the answer.
  if (options.auth && answer.res.status === 401 && answer.parsed?.code === 'token_expired') {
    if (await restore()) answer = await call(path, options);
  }
  const { res, parsed } = answer;
  if (!res.ok) throw new Problem(res.status, parsed, res.headers.get('retry-after'));
  return parsed;
}

async function call(path, options) {
  const res = await send(path, options);
  const text = await res.text();
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  return { res, parsed };
}

/** Takes a token answer (cookie mode: it has no refresh token) as the page's session. */
export function acceptTokens(tokens) {
  setAccess(tokens);
  return tokens.user;
}

/**
 * Resumes the session from the refresh cookie (page load, expiry). Resolves with the user, or null
 * when there is no live session. Concurrent callers share one refresh.
 */
export function restore() {
  restoring ??= (async () => {
    try {
      const tokens = await api('/api/v1/refresh-token', { method: 'POST', cookie: true });
      // 204, no body: this browser has no session cookie (nobody is signed in here).
      if (tokens === null) {
        access = null;
        user = null;
        return null;
      }
      return acceptTokens(tokens);
    } catch (err) {
      access = null;
      user = null;
      if (err.code === 'network') throw err;
      return null;
    } finally {
      restoring = null;
    }
  })();
  return restoring;
}

/** Ends this session (or every session with `everywhere`) and clears the cookie. */
export async function signOut(everywhere = false) {
  try {
    await api('/api/v1/logout', {
      method: 'POST',
      auth: true,
      cookie: true,
      body: everywhere ? { scope: 'global' } : undefined,
    });
  } finally {
    access = null;
    user = null;
    clearTimeout(refreshTimer);
  }
}

/** Where to go after signing in: `?next=` when it is one of this service's pages, else /account. */
export function nextUrl() {
  const next = new URLSearchParams(location.search).get('next');
  if (next && /^\/(account|admin)(\/[A-Za-z0-9_\-/]*)?$/.test(next)) return base + next;
  return `${base}/account`;
}

// --- UI helpers -------------------------------------------------------------------------------

export const $ = (selector, root = document) => root.querySelector(selector);

/** A sentence for a person, from a Problem or a browser error. */
export function describe(err) {
  if (err instanceof Problem) {
    if (err.code === 'rate_limited') {
      const wait = Number(err.retryAfter);
      if (!(wait > 0)) return t('js.error.rate_limited');
      return wait < 120
        ? t('js.error.rate_limited_wait', { seconds: wait })
        : t('js.error.rate_limited_wait_minutes', { minutes: Math.ceil(wait / 60) });
    }
    // weak_password and validation_failed explain themselves in English (the API's `detail`, which
    // stays English: API §24); another language shows its own general sentence for them.
    if (['weak_password', 'validation_failed', 'network'].includes(err.code)) {
      return lang === 'en' || err.code === 'network' ? err.message : t(`js.error.${err.code}`);
    }
    return has(`js.error.${err.code}`) ? t(`js.error.${err.code}`) : err.message;
  }
  if (err?.name === 'NotAllowedError' || err?.name === 'AbortError') return t('js.error.passkey_cancelled');
  if (err?.name === 'InvalidStateError') return t('js.error.passkey_registered');
  return t('js.error.generic');
}

/** Shows a form's error in its `[data-error]` region (role="alert": read out at once) and focuses it. */
export function showError(form, err) {
  const region = $('[data-error]', form);
  const message = typeof err === 'string' ? err : describe(err);
  const fields = err instanceof Problem && Array.isArray(err.body.errors) ? err.body.errors : [];
  for (const { path } of fields) {
    const input = form.elements?.namedItem(String(path).replace(/^\//, ''));
    if (input instanceof HTMLInputElement) input.setAttribute('aria-invalid', 'true');
  }
  region.textContent = message;
  // docs/api.md §23: a refusal naming the organization's connection offers the way that works.
  if (err instanceof Problem && err.code === 'sso_required') region.append(ssoButton(err.body.start_url));
  const invalid = form.querySelector('[aria-invalid="true"]');
  if (invalid instanceof HTMLElement) invalid.focus();
}

/** The link to an organization's single sign-on (`start_url` of 403 `sso_required`), or nothing. */
function ssoButton(startUrl) {
  // Only the connection's name is taken from the answer: the link is always our own start endpoint.
  const name = /\/api\/v1\/idp\/([a-z0-9_-]{1,64})\/start$/.exec(String(startUrl ?? ''))?.[1];
  if (name === undefined) return '';
  const href = `${base}/api/v1/idp/${name}/start?return_to=${encodeURIComponent(nextUrl())}`;
  const line = el('p', '');
  line.append(el('a', t('js.sso_required.continue'), { class: 'button sso-continue', href }));
  return line;
}

export function clearError(form) {
  const region = $('[data-error]', form);
  if (region) region.textContent = '';
  for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
}

/** Puts a message in a `role="status"` region (read out politely). */
export function announce(region, message) {
  region.textContent = '';
  // A new text node after a clear is announced even when the message repeats.
  requestAnimationFrame(() => {
    region.textContent = message;
  });
}

/**
 * Wires a form: native required/type checks, a busy submit button, errors shown and announced.
 * `action(values, form)` receives the fields as an object.
 */
export function onSubmit(form, action) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(form);
    for (const input of form.querySelectorAll('input[required]')) {
      if (!input.value.trim()) {
        input.setAttribute('aria-invalid', 'true');
      }
    }
    const missing = form.querySelector('[aria-invalid="true"]');
    if (missing) {
      const label =
        form.querySelector(`label[for="${missing.id}"]`)?.textContent ?? t('js.common.this_field');
      showError(form, t('js.common.field_required', { label: label.trim() }));
      return;
    }
    const button = form.querySelector('button[type="submit"]');
    button?.setAttribute('disabled', '');
    form.setAttribute('aria-busy', 'true');
    try {
      await action(Object.fromEntries(new FormData(form)), form);
    } catch (err) {
      showError(form, err);
    } finally {
      button?.removeAttribute('disabled');
      form.removeAttribute('aria-busy');
    }
  });
}

/** Shows one element and hides the others of a list. */
export function showOnly(shown, ...others) {
  for (const el of others) el.hidden = true;
  shown.hidden = false;
}

/** Moves focus to a heading or region so keyboard and screen reader users land on what changed. */
export function focusOn(el) {
  if (!el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1');
  el.focus();
}

/** The last path segment: the link token of /account/<flow>/<token>. */
export function tokenFromPath() {
  return decodeURIComponent(location.pathname.split('/').pop() ?? '');
}

/** Builds an element with text (never HTML). */
export function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

/** Marks an element left to right: an id, URI, address or code reads the same in a right-to-left page. */
export function ltr(node) {
  node.dir = 'ltr';
  return node;
}

// Browser and system names for a session list, most specific first (Edge and Opera say "Chrome"
// too, every iPhone browser says "Safari"). Only a label for people: the raw value stays in a tooltip.
const BROWSERS = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:(?:Headless)?Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/^curl\//, 'curl'],
];
const SYSTEMS = [
  [/\b(?:iPhone|iPod)\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

/**
 * "Chrome on Linux" (in the page's language) for a User-Agent header; the header itself (cut) when
 * neither part is known. Browser and system names stay as their makers write them.
 */
export function deviceName(userAgent) {
  if (!userAgent) return t('js.account.unknown_device');
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  if (browser && system) return t('js.account.device', { browser, system });
  if (browser || system) return browser ?? t('js.account.device_system', { system });
  return userAgent.length > 60 ? `${userAgent.slice(0, 60)}…` : userAgent;
}

// --- Passkeys (WebAuthn JSON helpers of the browser; no library needed) -----------------------

export const passkeysSupported =
  typeof window.PublicKeyCredential === 'function' &&
  typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function' &&
  typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function';

/** Asks the browser for an assertion; `conditional` for autofill on the e-mail field. */
export async function getAssertion(options, { conditional = false, signal } = {}) {
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options);
  const credential = await navigator.credentials.get({
    publicKey,
    signal,
    ...(conditional ? { mediation: 'conditional' } : {}),
  });
  return credential.toJSON();
}

/** Asks the browser to create a passkey. */
export async function createCredential(options) {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options);
  const credential = await navigator.credentials.create({ publicKey });
  return credential.toJSON();
}

// The picker: the choice is also the signed-in user's `locale` (PUT /users/<id>, self-editable).
wirePicker(async (tag) => {
  const who = user ?? (await restore().catch(() => null));
  if (who)
    await api(`/api/v1/users/${encodeURIComponent(who.id)}`, {
      method: 'PUT',
      auth: true,
      body: { locale: tag },
    });
});
