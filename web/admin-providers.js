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
import { $, clearError, focusOn, onSubmit, Problem } from './lib.js';

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
    cell(p.name),
    cell(p.preset ?? p.kind),
    cell(p.issuer),
    cell(p.client_id || '—'),
    cell(p.enabled ? 'enabled' : 'disabled'),
    rowButton('Edit', `Edit ${p.display_name}`, () => edit(p)),
  );
  // A SAML connection's own page (admin-sso.js): its SP values, a test sign-in, SCIM.
  if (p.kind === 'saml') tr.lastChild.append(' ', connectionButton(p));
  return tr;
}

async function load() {
  $('#providers-error').textContent = '';
  try {
    const { data } = await call('/api/v1/idp/providers');
    fillTable($('#providers-body'), data.map(providerRow), 'No providers yet.', 7);
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
  $('#pv-secret-hint').textContent = 'Write-only.';
  $('#provider-form-title').textContent = 'New provider';
  $('#provider-submit').textContent = 'Add provider';
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
  $('#pv-secret-hint').textContent = 'Write-only: leave empty to keep the current secret.';
  $('#provider-form-title').textContent = `Edit ${p.display_name}`;
  $('#provider-submit').textContent = 'Save changes';
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
    title: `Delete ${p.display_name}?`,
    text: 'Its button leaves the sign-in page and nobody can sign in through it. Linked identities are kept: creating a provider of the same name finds them again.',
    yes: 'Delete provider',
  });
  if (!sure) return;
  try {
    await call(`/api/v1/idp/providers/${encodeURIComponent(p.name)}`, { method: 'DELETE' });
    notify(`${p.display_name} was deleted.`);
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
    notify(current ? `${answer.display_name} was saved.` : `${answer.display_name} was added.`);
    focusOn($('#providers-title'));
  });
  $('#provider-cancel').addEventListener('click', () => {
    reset();
    focusOn($('#provider-form-title'));
  });
  $('#provider-delete').addEventListener('click', remove);
}
