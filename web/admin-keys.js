// API keys and service accounts (docs/console.md, docs/api-keys.md, API §22): every key, newest
// first in keyset pages of PAGE_SIZE, filtered by owner (`?owner=user:<id>|organization:<id>`);
// a key made for a user, a service account or an organization, shown once; revoking after a
// confirmation; a service account made. The admin's session drives every call: keys cannot make keys.

import {
  call,
  can,
  cell,
  confirmAction,
  fail,
  fillTable,
  notify,
  PAGE_SIZE,
  rowButton,
  userHref,
} from './admin-core.js';
import { orgHref } from './admin-orgs.js';
import {
  expiryText,
  fillScopeChoices,
  grantableScopes,
  hideKeySecret,
  keyPolicy,
  lastUsedText,
  rateLimitOf,
  scopesAndExpiry,
  scopesText,
  setExpiryLimits,
  showKeySecret,
  VERIFY_SCOPE,
} from './keys-shared.js';
import { $, el, focusOn, onSubmit, Problem, t } from './lib.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** cursors[i] fetches page i (null: the first). */
let cursors = [null];
let page = 0;
let nextCursor = null;
let generation = 0;
/** The owner filter as the API takes it (`user:<id>`), or null for every key. */
let ownerFilter = null;
/** `user:<id>` → what the table shows for that owner (its e-mail, a service account's name). */
const ownerNames = new Map();

export const keysHref = (type, id) => `#/keys?owner=${encodeURIComponent(`${type}:${id}`)}`;

/** The console's sentence for a refusal of this view. */
function worded(err) {
  if (err instanceof Problem) {
    if (err.code === 'api_key_not_found') return t('js.admin-keys.not_found');
    if (err.code === 'key_limit') return t('js.admin-keys.key_limit');
    if (err.code === 'not_found' || err.code === 'organization_not_found') return t('js.admin-keys.no_owner');
  }
  return err;
}

/** A user (by id, e-mail address or a service account's exact name) or an organization (id or slug). */
async function resolveOwner(type, who) {
  const text = who.trim();
  if (UUID.test(text)) return text;
  if (type === 'organization') {
    const found = await call(`/api/v1/organizations?${new URLSearchParams({ q: text, limit: '10' })}`);
    const org = found.data.find((o) => o.slug === text.toLowerCase());
    if (!org) throw t('js.admin-keys.no_owner');
    return org.id;
  }
  const found = await call(`/api/v1/users/search?${new URLSearchParams({ q: text, limit: '10' })}`);
  const lower = text.toLowerCase();
  const matches = found.data.filter((u) => (u.email ?? '').toLowerCase() === lower || u.name === text);
  if (matches.length === 0) throw t('js.admin-keys.no_owner');
  if (matches.length > 1) throw t('js.admin-keys.owner_ambiguous');
  return matches[0].id;
}

/** Whether `who` names a user or service account (an id that is no user's is an organization's). */
async function findsUser(who) {
  const text = who.trim();
  try {
    if (UUID.test(text)) await call(`/api/v1/users/${encodeURIComponent(text)}`);
    else await resolveOwner('user', text);
    return true;
  } catch {
    return false;
  }
}

async function ownerName(owner) {
  const key = `${owner.type}:${owner.id}`;
  if (!ownerNames.has(key)) {
    try {
      if (owner.type === 'organization') {
        ownerNames.set(key, (await call(`/api/v1/organizations/${encodeURIComponent(owner.id)}`)).name);
      } else {
        const user = await call(`/api/v1/users/${encodeURIComponent(owner.id)}`);
        ownerNames.set(
          key,
          user.kind === 'service' ? t('js.admin-keys.service_account', { name: user.name }) : user.email,
        );
      }
    } catch {
      // A deleted owner: its keys are revoked, but a page may still hold one. The id says enough.
      return owner.id;
    }
  }
  return ownerNames.get(key);
}

function row(key, owner) {
  const tr = el('tr');
  const ownerHref = key.owner.type === 'organization' ? orgHref(key.owner.id) : userHref(key.owner.id);
  const prefix = el('td');
  prefix.append(el('code', `${key.prefix}…`, { dir: 'ltr' }));
  tr.append(
    cell(key.name),
    cell(owner, ownerHref),
    prefix,
    cell(scopesText(key)),
    cell(expiryText(key)),
    cell(lastUsedText(key)),
    rowButton(
      t('js.admin-keys.revoke'),
      t('js.admin-keys.revoke_named', { name: key.name, owner }),
      () => revoke(key),
      'danger small',
    ),
  );
  return tr;
}

async function revoke(key) {
  const yes = await confirmAction({
    title: t('js.admin-keys.revoke_title'),
    text: t('js.admin-keys.revoke_text', { name: key.name, prefix: key.prefix }),
    yes: t('js.admin-keys.revoke_yes'),
  });
  if (!yes) return;
  try {
    await call(`/api/v1/api-keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
    notify(t('js.admin-keys.revoked', { name: key.name }));
    await loadPage();
    focusOn($('#keys-title'));
  } catch (err) {
    fail($('#keys-error'), worded(err));
  }
}

async function loadPage() {
  const mine = ++generation;
  $('#keys-error').textContent = '';
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (ownerFilter) params.set('owner', ownerFilter);
  if (cursors[page]) params.set('cursor', cursors[page]);
  try {
    const answer = await call(`/api/v1/api-keys?${params}`);
    const owners = await Promise.all(answer.data.map((key) => ownerName(key.owner)));
    // Only the newest request fills the table (an older, slower answer is dropped).
    if (mine !== generation) return;
    const empty = ownerFilter ? t('js.admin-keys.none_of_owner') : t('js.admin-keys.none');
    fillTable(
      $('#keys-body'),
      answer.data.map((key, i) => row(key, owners[i])),
      empty,
      7,
    );
    nextCursor = answer.next_cursor ?? null;
    $('#keys-prev').disabled = page === 0;
    $('#keys-next').disabled = nextCursor === null;
    $('#keys-page').textContent = t('js.admin-keys.page', { page: page + 1 });
    $('#keys-summary').textContent = ownerFilter
      ? t('js.admin-keys.summary_owner', { owner: await ownerName(ownerOf(ownerFilter)), page: page + 1 })
      : t('js.admin-keys.summary_all', { page: page + 1 });
  } catch (err) {
    if (mine === generation) fail($('#keys-error'), worded(err));
  }
}

const ownerOf = (filter) => {
  const [type, ...rest] = filter.split(':');
  return { type, id: rest.join(':') };
};

function restart() {
  cursors = [null];
  page = 0;
  return loadPage();
}

/** `#/keys`, `#/keys?owner=user:<id>`: the list from its first page, the forms ready. */
export async function showKeys(query) {
  hideKeySecret($('#keys-secret'));
  const owner = query.get('owner');
  ownerFilter = owner && /^(user|organization):\S+$/.test(owner) ? owner : null;
  const filter = $('#keys-filter').elements;
  filter.type.value = ownerFilter ? ownerOf(ownerFilter).type : '';
  filter.who.value = ownerFilter ? ownerOf(ownerFilter).id : '';
  if (ownerFilter) {
    // The new key goes to the owner the list shows, unless the admin names another.
    const create = $('#key-create').elements;
    create.type.value = ownerOf(ownerFilter).type;
    create.who.value = ownerOf(ownerFilter).id;
  }
  setExpiryLimits($('#key-expires'), $('#key-expires-hint'));
  try {
    fillScopeChoices($('#key-scopes'), [...(await grantableScopes()), VERIFY_SCOPE], 'key-scope');
  } catch (err) {
    fail($('#keys-error'), err);
  }
  return restart();
}

/**
 * A link to an owner's keys on a user's page (in `container`, beside the audit link) or an
 * organization's (its own paragraph in `container`); hidden while api_keys is off.
 */
export function ownerKeysLink(container, type, id) {
  let link = container.querySelector('[data-owner-keys]');
  if (!link) {
    const text = type === 'organization' ? t('js.admin-keys.org_link') : t('js.admin-keys.user_link');
    link = el('a', text, { 'data-owner-keys': '' });
    if (type === 'organization') {
      const p = el('p');
      p.append(link);
      container.append(p);
    } else container.append(link);
  }
  const off = !can('GET /api/v1/api-keys');
  link.hidden = off;
  if (link.parentElement.tagName === 'P') link.parentElement.hidden = off;
  link.setAttribute('href', keysHref(type, id));
}

export function initKeys() {
  $('#key-never-field').hidden = !keyPolicy.noExpiry;
  window.addEventListener('hashchange', () => {
    // Leaving the view forgets a key still shown.
    if (!location.hash.startsWith('#/keys')) hideKeySecret($('#keys-secret'));
  });
  onSubmit($('#keys-filter'), async (values) => {
    if (!values.who.trim()) {
      location.hash = '#/keys';
      if (!ownerFilter) return restart();
      return;
    }
    // "Any owner" with a name: a user or service account first, else an organization.
    const type = values.type || ((await findsUser(values.who)) ? 'user' : 'organization');
    const target = keysHref(type, await resolveOwner(type, values.who));
    if (location.hash === target) return restart();
    location.hash = target;
  });
  $('#keys-next').addEventListener('click', () => {
    if (nextCursor === null) return;
    cursors = cursors.slice(0, page + 1);
    cursors.push(nextCursor);
    page += 1;
    loadPage().then(() => $('#keys-table').focus());
  });
  $('#keys-prev').addEventListener('click', () => {
    if (page === 0) return;
    page -= 1;
    loadPage();
  });
  $('#keys-table').setAttribute('tabindex', '-1');
  onSubmit($('#key-create'), async (values, form) => {
    const body = { name: values.name.trim(), ...scopesAndExpiry(form) };
    const rateLimit = rateLimitOf(values);
    if (rateLimit) body.rate_limit = rateLimit;
    const id = await resolveOwner(values.type, values.who);
    body[values.type === 'organization' ? 'organization_id' : 'user_id'] = id;
    let created;
    try {
      created = await call('/api/v1/api-keys', { method: 'POST', body });
    } catch (err) {
      throw worded(err);
    }
    form.elements.name.value = '';
    notify(t('js.admin-keys.created', { name: created.name }));
    showKeySecret($('#keys-secret'), created.key, () => focusOn($('#keys-title')));
    await restart();
  });
  onSubmit($('#sa-create'), async (values, form) => {
    const account = await call('/api/v1/service-accounts', {
      method: 'POST',
      body: { name: values.name.trim(), role: values.role },
    });
    form.reset();
    ownerNames.set(`user:${account.id}`, t('js.admin-keys.service_account', { name: account.name }));
    const create = $('#key-create').elements;
    create.type.value = 'user';
    create.who.value = account.id;
    notify(t('js.admin-keys.service_account_created', { name: account.name }));
    focusOn($('#key-new-title'));
  });
}
