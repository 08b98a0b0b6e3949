// OAuth apps (docs/console.md): the authorization server's clients and the APIs (resources) they may
// ask tokens for, through the admin API of docs/api.md §17. A client secret is shown once.

import {
  call,
  can,
  cell,
  confirmAction,
  explain,
  fail,
  fillTable,
  hideSecret,
  lines,
  notify,
  rowButton,
  showSecret,
  words,
} from './admin-core.js';
import { hideConnect, showConnect } from './admin-oauth-connect.js';
import { initRegistrationToken, showRegistrationToken } from './admin-oauth-token.js';
import { $, clearError, focusOn, ltr, onSubmit, Problem, t } from './lib.js';

const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials'];
const clientForm = $('#client-form');
const resourceForm = $('#resource-form');
let editingClient = null;
let editingResource = null;
let clients = [];

/** Field errors keep their marks; other refusals become the console's sentence. */
function worded(err) {
  return err instanceof Problem && err.code === 'validation_failed' ? err : explain(err);
}

// --- Clients ------------------------------------------------------------------------------------

function clientRow(c) {
  const tr = document.createElement('tr');
  tr.append(
    cell(c.name),
    ltr(cell(c.client_id)),
    cell(
      t('js.admin-oauth.client_kind', {
        type: t(`js.admin-oauth.type_${c.type}`),
        application_type: t(`js.admin-oauth.application_${c.application_type}`),
        first_party: c.first_party ? 'yes' : 'no',
      }),
    ),
    ltr(cell(c.grant_types.join(', '))),
    ltr(cell(c.redirect_uris.join(', ') || '—')),
    rowButton(t('js.admin-oauth.edit'), t('js.admin-oauth.edit_name', { name: c.name }), () => editClient(c)),
  );
  return tr;
}

async function loadClients() {
  $('#clients-error').textContent = '';
  try {
    const { data } = await call('/api/v1/clients');
    clients = data;
    fillTable($('#clients-body'), data.map(clientRow), t('js.admin-oauth.no_clients'), 6);
  } catch (err) {
    fail($('#clients-error'), err);
  }
}

function resetClientForm() {
  editingClient = null;
  clientForm.reset();
  clearError(clientForm);
  clientForm.elements.type.disabled = false;
  $('#client-form-title').textContent = t('js.admin-oauth.new_client');
  $('#client-submit').textContent = t('js.admin-oauth.create_client');
  for (const id of ['#client-rotate', '#client-delete', '#client-cancel']) $(id).hidden = true;
  hideConnect();
  // The address names no client any more (history only: no hashchange, no reload of the view).
  if (location.hash.startsWith('#/oauth/')) history.replaceState(null, '', '#/oauth');
}

function editClient(c) {
  resetClientForm();
  editingClient = c;
  const f = clientForm.elements;
  f.name.value = c.name;
  f.type.value = c.type;
  f.type.disabled = true;
  f.application_type.value = c.application_type;
  f.redirect_uris.value = c.redirect_uris.join('\n');
  f.post_logout_redirect_uris.value = c.post_logout_redirect_uris.join('\n');
  for (const g of GRANTS) f[`grant_${g}`].checked = c.grant_types.includes(g);
  f.scopes.value = c.scopes.join(' ');
  f.resources.value = c.resources.join('\n');
  f.token_endpoint_auth_method.value = c.token_endpoint_auth_method;
  f.first_party.checked = c.first_party;
  f.introspection.checked = c.introspection;
  f.pkce_optional.checked = c.pkce_required === false;
  $('#client-form-title').textContent = t('js.admin-oauth.edit_name', { name: c.name });
  $('#client-submit').textContent = t('js.admin-oauth.save_changes');
  $('#client-rotate').hidden = c.type !== 'confidential' || !can('POST /api/v1/clients/<id>/secret');
  $('#client-delete').hidden = !can('DELETE /api/v1/clients/<id>');
  $('#client-cancel').hidden = false;
  // A client's page has its own address (`#/oauth/<client_id>`), to bookmark or hand over.
  history.replaceState(null, '', `#/oauth/${encodeURIComponent(c.client_id)}`);
  focusOn($('#client-form-title'));
  return showConnect(c);
}

function clientBody(values) {
  const f = clientForm.elements;
  const body = {
    name: values.name.trim(),
    application_type: values.application_type,
    redirect_uris: lines(values.redirect_uris),
    post_logout_redirect_uris: lines(values.post_logout_redirect_uris),
    grant_types: GRANTS.filter((g) => f[`grant_${g}`].checked),
    scopes: words(values.scopes),
    resources: lines(values.resources),
    first_party: f.first_party.checked,
    introspection: f.introspection.checked,
    pkce_required: !f.pkce_optional.checked,
  };
  if (values.token_endpoint_auth_method) body.token_endpoint_auth_method = values.token_endpoint_auth_method;
  // The type is fixed once the client exists (the update API does not take it).
  if (editingClient === null) body.type = f.type.value;
  return body;
}

const clientPath = (c) => `/api/v1/clients/${encodeURIComponent(c.client_id)}`;

async function rotateClient() {
  const c = editingClient;
  const sure = await confirmAction({
    title: t('js.admin-oauth.rotate_title', { name: c.name }),
    text: t('js.admin-oauth.rotate_text'),
    yes: t('js.admin-oauth.rotate_yes'),
  });
  if (!sure) return;
  try {
    const answer = await call(`${clientPath(c)}/secret`, { method: 'POST' });
    notify(t('js.admin-oauth.rotated', { name: c.name }));
    showSecret($('#client-secret'), answer.client_secret);
  } catch (err) {
    fail($('[data-error]', clientForm), err);
  }
}

async function deleteClient() {
  const c = editingClient;
  const sure = await confirmAction({
    title: t('js.admin-oauth.delete_title', { name: c.name }),
    text: t('js.admin-oauth.delete_client_text'),
    yes: t('js.admin-oauth.delete_client_yes'),
  });
  if (!sure) return;
  try {
    await call(clientPath(c), { method: 'DELETE' });
    notify(t('js.admin-oauth.deleted', { name: c.name }));
    resetClientForm();
    await loadClients();
    focusOn($('#clients-title'));
  } catch (err) {
    fail($('[data-error]', clientForm), err);
  }
}

// --- Resources ----------------------------------------------------------------------------------

function resourceRow(r) {
  const tr = document.createElement('tr');
  tr.append(
    cell(r.name),
    ltr(cell(r.identifier)),
    ltr(cell(r.scopes.map((s) => s.name).join(' ') || '—')),
    cell(t('js.admin-oauth.token_lifetime', { seconds: r.access_token_ttl_s, rbac: r.rbac ? 'yes' : 'no' })),
    rowButton(t('js.admin-oauth.edit'), t('js.admin-oauth.edit_name', { name: r.name }), () =>
      editResource(r),
    ),
  );
  return tr;
}

async function loadResources() {
  $('#resources-error').textContent = '';
  try {
    const { data } = await call('/api/v1/resources');
    fillTable($('#resources-body'), data.map(resourceRow), t('js.admin-oauth.no_apis'), 5);
  } catch (err) {
    fail($('#resources-error'), err);
  }
}

function resetResourceForm() {
  editingResource = null;
  resourceForm.reset();
  clearError(resourceForm);
  resourceForm.elements.identifier.disabled = false;
  $('#resource-form-title').textContent = t('js.admin-oauth.new_api');
  $('#resource-submit').textContent = t('js.admin-oauth.add_api');
  $('#resource-delete').hidden = true;
  $('#resource-cancel').hidden = true;
}

function editResource(r) {
  resetResourceForm();
  editingResource = r;
  const f = resourceForm.elements;
  f.identifier.value = r.identifier;
  f.identifier.disabled = true;
  f.name.value = r.name;
  f.scopes.value = r.scopes.map((s) => `${s.name} ${s.description}`.trim()).join('\n');
  f.access_token_ttl_s.value = String(r.access_token_ttl_s);
  f.rbac.checked = r.rbac === true;
  $('#resource-form-title').textContent = t('js.admin-oauth.edit_name', { name: r.name });
  $('#resource-submit').textContent = t('js.admin-oauth.save_changes');
  $('#resource-delete').hidden = !can('DELETE /api/v1/resources/<id>');
  $('#resource-cancel').hidden = false;
  focusOn($('#resource-form-title'));
}

function resourceBody(values) {
  const scopes = lines(values.scopes).map((line) => {
    const [name, ...rest] = line.split(/\s+/);
    return { name, description: rest.join(' ') };
  });
  const body = { name: values.name.trim(), scopes, rbac: resourceForm.elements.rbac.checked };
  if (values.access_token_ttl_s) body.access_token_ttl_s = Number(values.access_token_ttl_s);
  if (editingResource === null) body.identifier = values.identifier.trim();
  return body;
}

async function deleteResource() {
  const r = editingResource;
  const sure = await confirmAction({
    title: t('js.admin-oauth.delete_title', { name: r.name }),
    text: t('js.admin-oauth.delete_api_text'),
    yes: t('js.admin-oauth.delete_api_yes'),
  });
  if (!sure) return;
  try {
    await call(`/api/v1/resources/${encodeURIComponent(r.id)}`, { method: 'DELETE' });
    notify(t('js.admin-oauth.deleted', { name: r.name }));
    resetResourceForm();
    await loadResources();
    focusOn($('#resources-title'));
  } catch (err) {
    fail($('[data-error]', resourceForm), err);
  }
}

// --- View ---------------------------------------------------------------------------------------

/** `#/oauth`, or `#/oauth/<client_id>`: that client's page (its form and its Connect card). */
export async function showOAuth(clientId) {
  hideSecret($('#client-secret'));
  showRegistrationToken();
  resetClientForm();
  resetResourceForm();
  const resources = can('GET /api/v1/resources');
  $('#resources-section').hidden = !resources;
  await Promise.all([loadClients(), resources ? loadResources() : null]);
  const c = clientId === undefined ? undefined : clients.find((x) => x.client_id === clientId);
  if (c !== undefined) await editClient(c);
  else if (clientId !== undefined)
    fail($('#clients-error'), t('js.admin-oauth.no_such_client', { id: clientId }));
}

export function initOAuth() {
  initRegistrationToken();
  onSubmit(clientForm, async (values) => {
    const body = clientBody(values);
    const editing = editingClient;
    let answer;
    try {
      answer = editing
        ? await call(clientPath(editing), { method: 'PUT', body })
        : await call('/api/v1/clients', { method: 'POST', body });
    } catch (err) {
      throw worded(err);
    }
    resetClientForm();
    await loadClients();
    notify(
      editing
        ? t('js.admin-oauth.saved', { name: answer.name })
        : t('js.admin-oauth.client_created', { name: answer.name, client_id: answer.client_id }),
    );
    if (answer.client_secret) showSecret($('#client-secret'), answer.client_secret);
    else focusOn($('#clients-title'));
  });
  $('#client-cancel').addEventListener('click', () => {
    resetClientForm();
    focusOn($('#client-form-title'));
  });
  $('#client-rotate').addEventListener('click', rotateClient);
  $('#client-delete').addEventListener('click', deleteClient);

  onSubmit(resourceForm, async (values) => {
    const body = resourceBody(values);
    const editing = editingResource;
    let answer;
    try {
      answer = editing
        ? await call(`/api/v1/resources/${encodeURIComponent(editing.id)}`, { method: 'PUT', body })
        : await call('/api/v1/resources', { method: 'POST', body });
    } catch (err) {
      throw worded(err);
    }
    resetResourceForm();
    await loadResources();
    notify(t(editing ? 'js.admin-oauth.saved' : 'js.admin-oauth.added', { name: answer.name }));
    focusOn($('#resources-title'));
  });
  $('#resource-cancel').addEventListener('click', () => {
    resetResourceForm();
    focusOn($('#resource-form-title'));
  });
  $('#resource-delete').addEventListener('click', deleteResource);
}
