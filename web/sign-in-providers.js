// The sign-in page's external providers (docs/providers.md): one plain link per enabled provider
// ("Continue with …"; no form, so a strict form-action keeps working), the sentence for a provider
// sign-in that failed (`?error=<code>`), and the pending second factor of one that needs it
// (`?continue=provider`: the step is fetched once from the server, never carried in the URL).
import { $, api, el, has, modules, nextUrl, t } from './lib.js';

// Icons ship with the pages (no hot-linking); a provider without a preset gets the generic one.
const ICONS = new Set(['google', 'microsoft', 'github', 'gitlab', 'apple']);

/** The sentence for `?error=<code>` (the code alone travels; the page says it plainly), or null. */
export function providerError() {
  const code = new URLSearchParams(location.search).get('error');
  if (code === null) return null;
  // Only codes this page names: `?error=` is anyone's to write, and a key must not be guessed at.
  const key = `js.provider_error.${code}`;
  return /^[a-z_]{1,40}$/.test(code) && code !== 'fallback' && has(key)
    ? t(key)
    : t('js.provider_error.fallback');
}

/** Adds the buttons of the enabled providers. */
export async function showProviders() {
  if (!modules.has('providers')) return;
  const { data } = await api('/api/v1/idp/buttons');
  if (data.length === 0) return;
  const list = $('#provider-list');
  const returnTo = encodeURIComponent(nextUrl());
  for (const p of data) {
    const link = el('a', '', { class: 'button provider', href: `${p.start_url}?return_to=${returnTo}` });
    const icon = ICONS.has(p.icon) ? p.icon : 'generic';
    const img = el('img', '', {
      src: new URL(`provider-${icon}.svg`, import.meta.url).pathname,
      alt: '',
      width: '20',
      height: '20',
    });
    link.append(img, document.createTextNode(t('js.sign_in.continue_with', { provider: p.display_name })));
    const item = el('li', '');
    item.append(link);
    list.append(item);
  }
  $('#providers').hidden = false;
}

/** The pending second factor of a provider sign-in, when the page was sent here to finish one. */
export async function pendingSecondFactor() {
  if (new URLSearchParams(location.search).get('continue') !== 'provider') return null;
  return api('/api/v1/idp/continue', { method: 'POST' });
}
