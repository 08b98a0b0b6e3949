// The sign-in page's external providers (docs/providers.md): one plain link per enabled provider
// ("Continue with …"; no form, so a strict form-action keeps working), the sentence for a provider
// sign-in that failed (`?error=<code>`), and the pending second factor of one that needs it
// (`?continue=provider`: the step is fetched once from the server, never carried in the URL).
import { $, api, el, modules, nextUrl } from './lib.js';

// Icons ship with the pages (no hot-linking); a provider without a preset gets the generic one.
const ICONS = new Set(['google', 'microsoft', 'github', 'gitlab', 'apple']);

const SENTENCES = {
  link_invalid:
    'That sign-in did not complete: it was used already, expired, or was started in another browser. Please try again.',
  idp_token_invalid:
    'The provider’s answer could not be accepted (for example, it has not confirmed your e-mail address). Try again or sign in another way.',
  identity_link_required:
    'An account with this e-mail address exists already. Sign in another way, then link this provider from your account page.',
  account_disabled: 'This account has been disabled. Contact your administrator.',
  email_not_verified: 'Your e-mail address must be confirmed before you can sign in.',
  mfa_enrollment_required:
    'Your account needs two-step verification before you can sign in. Sign in with your password to set it up.',
  forbidden: 'This sign-in is not allowed here. Sign in another way or ask your administrator.',
  provider_not_found: 'This sign-in provider is not available any more.',
  idp_unavailable: 'The provider cannot be reached right now. Please try again in a moment.',
  rate_limited: 'Too many attempts. Please wait a moment and try again.',
};
const FALLBACK = 'The sign-in with that provider did not complete. Please try again or sign in another way.';

/** The sentence for `?error=<code>` (the code alone travels; the page says it plainly), or null. */
export function providerError() {
  const code = new URLSearchParams(location.search).get('error');
  if (code === null) return null;
  return SENTENCES[code] ?? FALLBACK;
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
    link.append(img, document.createTextNode(`Continue with ${p.display_name}`));
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
