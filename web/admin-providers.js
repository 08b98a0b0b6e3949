// Sign-in providers (docs/console.md): the named external providers of docs/api.md §18, created
// from a preset or any OpenID Connect issuer. Secrets and private keys are write-only: the form
// sends them and the API never answers them, so the page never has one to show.

import {
  call,
  can,
  cell,
  confirmAction,
  explain,
  fail,
  fillTable,
  notify,
  rowButton,
  words,
} from './admin-core.js';
import { connectionButton, hideConnection, initConnection } from './admin-sso.js';
import { $, clearError, focusOn, ltr, onSubmit, Problem, t } from './lib.js';

const form = $('#provider-form');
const FLAGS = ['enabled', 'auto_provision', 'link_by_email', 'link_admins'];
/** Write-only or preset-specific fields: sent only when filled in (empty keeps what is stored). */
const OPTIONAL = ['client_secret', 'tenant_id', 'team_id', 'key_id', 'private_key', 'api_url', 'issuer'];
let editing = null;

/** Shows the fields the chosen preset takes (`data-for` lists presets; "oidc" is no preset). */
function applyPreset() {
  const preset = form.elements.preset.value || 'oidc';
  for (const field of form.querySelectorAll('[data-for]')) {
    field.hidden = !field.dataset.for.split(' ').includes(preset);
  }
}

function providerRow(p) {
  const tr = document.createElement('tr');
  tr.append(
    cell(p.display_name),
    ltr(cell(p.name)),
    ltr(cell(p.preset ?? p.kind)),
    ltr(cell(p.issuer)),
    ltr(cell(p.client_id || '—')),
    cell(t(p.enabled ? 'js.admin-providers.enabled' : 'js.admin-providers.disabled')),
    rowButton(t('js.admin-providers.edit'), t('js.admin-providers.edit_name', { name: p.display_name }), () =>
      edit(p),
    ),
  );
  // A SAML connection's own page (admin-sso.js): its SP values, a test sign-in, SCIM.
  if (p.kind === 'saml') tr.lastChild.append(' ', connectionButton(p));
  return tr;
}

async function load() {
  $('#providers-error').textContent = '';
  try {
    const { data } = await call('/api/v1/idp/providers');
    fillTable($('#providers-body'), data.map(providerRow), t('js.admin-providers.no_providers'), 7);
  } catch (err) {
    fail($('#providers-error'), err);
  }
}

function reset() {
  editing = null;
  form.reset();
  clearError(form);
  form.elements.name.disabled = false;
  form.elements.preset.disabled = false;
  $('#pv-secret-hint').textContent = t('js.admin-providers.write_only');
  $('#provider-form-title').textContent = t('js.admin-providers.new_provider');
  $('#provider-submit').textContent = t('js.admin-providers.add_provider');
  $('#provider-delete').hidden = true;
  $('#provider-cancel').hidden = true;
  applyPreset();
}

function edit(p) {
  reset();
  editing = p;
  const f = form.elements;
  f.preset.value = p.preset ?? '';
  f.preset.disabled = true;
  f.name.value = p.name;
  f.name.disabled = true;
  f.display_name.value = p.display_name;
  f.issuer.value = p.issuer;
  f.client_id.value = p.client_id;
  f.scopes.value = p.scopes.join(' ');
  f.allowed_domains.value = p.allowed_domains.join(' ');
  for (const flag of FLAGS) f[flag].checked = p[flag];
  // The stored secret never comes back: an empty field keeps it.
  $('#pv-secret-hint').textContent = t('js.admin-providers.write_only_keep');
  $('#provider-form-title').textContent = t('js.admin-providers.edit_name', { name: p.display_name });
  $('#provider-submit').textContent = t('js.admin-providers.save_changes');
  $('#provider-delete').hidden = !can('DELETE /api/v1/idp/providers/<name>');
  $('#provider-cancel').hidden = false;
  applyPreset();
  focusOn($('#provider-form-title'));
}

function body(values) {
  const f = form.elements;
  const out = { client_id: values.client_id.trim(), allowed_domains: words(values.allowed_domains) };
  for (const flag of FLAGS) out[flag] = f[flag].checked;
  if (values.display_name.trim()) out.display_name = values.display_name.trim();
  if (values.scopes.trim()) out.scopes = words(values.scopes);
  for (const name of OPTIONAL) {
    const value = String(values[name] ?? '').trim();
    if (value && !f[name].closest('.field').hidden) out[name] = name === 'private_key' ? values[name] : value;
  }
  // A fixed preset issuer is not sent back (the API refuses to change it).
  if (editing?.preset && !['gitlab', 'github'].includes(editing.preset)) delete out.issuer;
  if (editing === null) {
    out.name = values.name.trim();
    if (f.preset.value) out.preset = f.preset.value;
  }
  if (!out.client_id) delete out.client_id;
  return out;
}

async function remove() {
  const p = editing;
  const sure = await confirmAction({
    title: t('js.admin-providers.delete_title', { name: p.display_name }),
    text: t('js.admin-providers.delete_text'),
    yes: t('js.admin-providers.delete_yes'),
  });
  if (!sure) return;
  try {
    await call(`/api/v1/idp/providers/${encodeURIComponent(p.name)}`, { method: 'DELETE' });
    notify(t('js.admin-providers.deleted', { name: p.display_name }));
    reset();
    await load();
    focusOn($('#providers-title'));
  } catch (err) {
    fail($('[data-error]', form), err);
  }
}

export function showProviders() {
  reset();
  hideConnection();
  return load();
}

export function initProviders() {
  initConnection();
  form.elements.preset.addEventListener('change', applyPreset);
  onSubmit(form, async (values) => {
    const current = editing;
    let answer;
    try {
      answer = current
        ? await call(`/api/v1/idp/providers/${encodeURIComponent(current.name)}`, {
            method: 'PUT',
            body: body(values),
          })
        : await call('/api/v1/idp/providers', { method: 'POST', body: body(values) });
    } catch (err) {
      throw err instanceof Problem && err.code === 'validation_failed' ? err : explain(err);
    }
    reset();
    await load();
    notify(
      t(current ? 'js.admin-providers.saved' : 'js.admin-providers.added', { name: answer.display_name }),
    );
    focusOn($('#providers-title'));
  });
  $('#provider-cancel').addEventListener('click', () => {
    reset();
    focusOn($('#provider-form-title'));
  });
  $('#provider-delete').addEventListener('click', remove);
}
