// What the console's API keys view (admin-keys.js) and /account's (account-keys.js) share
// (docs/api-keys.md, API §22): the scopes a key may name, the expiry limits, a key's one-line
// description, and the panel that shows a new key this once.
import { $, announce, api, el, formatDate, t } from './lib.js';

const DAY_MS = 86_400_000;
export const VERIFY_SCOPE = 'api_keys:verify';

/** API_KEY_MAX_TTL_DAYS and API_KEY_ALLOW_NO_EXPIRY, as the server put them on the page. */
export const keyPolicy = {
  maxDays: Number(document.body.dataset.keyMaxDays) || 365,
  noExpiry: document.body.dataset.keyNoExpiry === 'true',
};

/**
 * The scopes a key may carry now: `<group>:read|write` of every group in the index (the enabled
 * modules' listed endpoints, API §3, exactly what the service accepts), sorted.
 */
export async function grantableScopes() {
  const index = await api('/api/v1');
  return Object.keys(index.documentation ?? {})
    .sort()
    .flatMap((group) => [`${group}:read`, `${group}:write`]);
}

/** A checkbox per scope in `box` (`name="scope"`), each labelled by the scope itself. */
export function fillScopeChoices(box, scopes, idPrefix) {
  box.replaceChildren(
    ...scopes.map((scope, i) => {
      const field = el('div', null, { class: 'field check' });
      const id = `${idPrefix}-${i}`;
      field.append(
        el('input', null, { type: 'checkbox', id, name: 'scope', value: scope }),
        el('label', scope, { for: id, dir: 'ltr' }),
      );
      return field;
    }),
  );
}

/** The expiry field's limits: tomorrow to API_KEY_MAX_TTL_DAYS ahead (dates in UTC, as sent). */
export function setExpiryLimits(input, hint) {
  const day = (ms) => new Date(ms).toISOString().slice(0, 10);
  input.min = day(Date.now() + DAY_MS);
  input.max = day(Date.now() + keyPolicy.maxDays * DAY_MS);
  hint.textContent = t('js.account-keys.expiry_hint', { days: keyPolicy.maxDays });
}

/**
 * The create body's scopes and expiry from the form: the checked scopes, or null when "everything
 * the owner may do" is chosen; an expiry at the start of the chosen day (UTC), none when empty (the
 * service then sets API_KEY_MAX_TTL_DAYS ahead). Throws a sentence for the form's alert.
 */
export function scopesAndExpiry(form) {
  const all = form.elements.access?.value === 'all';
  const scopes = [...form.querySelectorAll('input[name="scope"]:checked')].map((c) => c.value);
  if (!all && scopes.length === 0) throw t('js.account-keys.pick_a_scope');
  const body = { scopes: all ? null : scopes };
  const never = form.elements.never;
  if (never?.checked) body.expires_at = null;
  else if (form.elements.expires.value) {
    const value = form.elements.expires.value;
    if (value < form.elements.expires.min || value > form.elements.expires.max) {
      throw t('js.account-keys.expiry_range', { days: keyPolicy.maxDays });
    }
    body.expires_at = `${value}T00:00:00.000Z`;
  }
  return body;
}

/** The stored scopes as the API names them, or the words for `null` (everything the owner may do). */
export function scopesText(key) {
  return key.scopes === null ? t('js.account-keys.scopes_all') : key.scopes.join(' ');
}

export function expiryText(key) {
  if (key.expires_at === null) return t('js.account-keys.never_expires');
  const text = formatDate(key.expires_at);
  return Date.parse(key.expires_at) <= Date.now() ? t('js.account-keys.expired_on', { date: text }) : text;
}

export function lastUsedText(key) {
  return key.last_used_at === null ? t('js.account-keys.never_used') : formatDate(key.last_used_at);
}

/**
 * Shows a new key in its panel, with a copy button; the page keeps it nowhere else: "I have stored
 * it", the next key or leaving clears it, and nothing can show it again (API §22).
 */
export function showKeySecret(panel, key, onDone) {
  const code = $('[data-secret]', panel);
  const copied = $('[data-copied]', panel);
  code.textContent = key;
  copied.textContent = '';
  panel.hidden = false;
  $('[data-copy]', panel).onclick = async () => {
    try {
      await navigator.clipboard.writeText(code.textContent);
      announce(copied, t('js.account-keys.copied'));
    } catch {
      // No clipboard (an insecure origin, a refused permission): select it for a manual copy.
      getSelection()?.selectAllChildren(code);
      announce(copied, t('js.account-keys.copy_by_hand'));
    }
  };
  $('[data-done]', panel).onclick = () => {
    hideKeySecret(panel);
    onDone?.();
  };
  $('h2, h3', panel).focus();
}

export function hideKeySecret(panel) {
  $('[data-secret]', panel).textContent = '';
  $('[data-copied]', panel).textContent = '';
  panel.hidden = true;
}

/** The rate limit fields (both or neither): `{requests, window_s}`, null, or a sentence. */
export function rateLimitOf(values) {
  const requests = String(values.rate_requests ?? '').trim();
  const window = String(values.rate_window ?? '').trim();
  if (!requests && !window) return undefined;
  const r = Number(requests);
  const w = Number(window);
  if (!Number.isInteger(r) || r < 1 || r > 1_000_000 || !Number.isInteger(w) || w < 1 || w > 86_400) {
    throw t('js.admin-keys.rate_limit_invalid');
  }
  return { requests: r, window_s: w };
}
