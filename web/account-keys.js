// /account's API keys (API §22, docs/api-keys.md): the person's own keys, listed with
// `?owner=user:<their id>` (an admin's list without it would be everyone's), created for themself
// (name, scopes, expiry; the key is shown once) and revoked. The session cookie drives every call:
// a key cannot create or revoke keys.
import {
  expiryText,
  fillScopeChoices,
  grantableScopes,
  hideKeySecret,
  keyPolicy,
  lastUsedText,
  scopesAndExpiry,
  scopesText,
  setExpiryLimits,
  showKeySecret,
  VERIFY_SCOPE,
} from './keys-shared.js';
import { $, api, currentUser, el, focusOn, formatDate, modules, onSubmit, showError, t } from './lib.js';

const auth = { auth: true };
const PAGE_SIZE = 25;
let cursor = null;
let wired = false;

function keyItem(key, say) {
  const item = el('li');
  const text = el('span', null, { class: 'item-text' });
  text.append(
    el('strong', key.name),
    el('code', `${key.prefix}…`, { class: 'badge', dir: 'ltr' }),
    el('br'),
    el('span', t('js.account-keys.scopes', { scopes: scopesText(key) }), { class: 'muted' }),
    el('br'),
    el(
      'span',
      t('js.account-keys.facts', {
        created: formatDate(key.created_at),
        expires: expiryText(key),
        used: lastUsedText(key),
      }),
      { class: 'muted' },
    ),
  );
  const revoke = el('button', t('js.account-keys.revoke'), {
    type: 'button',
    class: 'danger',
    'aria-label': t('js.account-keys.revoke_named', { name: key.name }),
  });
  revoke.addEventListener('click', async () => {
    if (!window.confirm(t('js.account-keys.revoke_confirm', { name: key.name }))) return;
    try {
      await api(`/api/v1/api-keys/${encodeURIComponent(key.id)}`, { ...auth, method: 'DELETE' });
      say(t('js.account-keys.revoked', { name: key.name }));
      await loadKeyList();
      focusOn($('#keys-title'));
    } catch (err) {
      showError($('#keys-section'), err);
    }
  });
  item.append(text, revoke);
  return item;
}

let announceTo = () => {};

async function loadKeyList({ more = false } = {}) {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE), owner: `user:${currentUser().id}` });
  if (more && cursor) params.set('cursor', cursor);
  const page = await api(`/api/v1/api-keys?${params}`, auth);
  const items = page.data.map((key) => keyItem(key, announceTo));
  if (more) $('#keys-list').append(...items);
  else $('#keys-list').replaceChildren(...items);
  cursor = page.next_cursor ?? null;
  $('#keys-more').hidden = cursor === null;
  $('#keys-empty').hidden = $('#keys-list').children.length > 0;
}

function wire() {
  wired = true;
  $('#key-never-field').hidden = !keyPolicy.noExpiry;
  setExpiryLimits($('#key-expires'), $('#key-expires-hint'));
  $('#keys-more').addEventListener('click', () =>
    loadKeyList({ more: true }).catch((err) => showError($('#keys-section'), err)),
  );
  onSubmit($('#key-form'), async (values, form) => {
    const body = { name: values.name.trim(), ...scopesAndExpiry(form) };
    const created = await api('/api/v1/api-keys', { ...auth, method: 'POST', body });
    form.reset();
    announceTo(t('js.account-keys.created', { name: created.name }));
    await loadKeyList();
    showKeySecret($('#key-secret'), created.key, () => focusOn($('#keys-title')));
  });
}

/** Lists the person's keys and wires the form; `say` announces a creation or a revocation. */
export async function loadKeys(say) {
  if (!modules.has('api_keys')) return;
  announceTo = say;
  hideKeySecret($('#key-secret'));
  if (!wired) wire();
  // Only an admin may give a key api_keys:verify (API §22); nobody else is offered it.
  const scopes = await grantableScopes();
  if (currentUser().role === 'admin') scopes.push(VERIFY_SCOPE);
  fillScopeChoices($('#key-scopes'), scopes, 'key-scope');
  await loadKeyList();
}
