// Roles (docs/console.md, docs/organizations.md): the one catalogue of role names and the
// permissions each grants. Every call is one of docs/api.md §21: roles.list, roles.put, roles.delete.

import {
  call,
  cell,
  confirmAction,
  explain,
  fail,
  fillTable,
  notify,
  rowButton,
  words,
} from './admin-core.js';
import { $, focusOn, ltr, onSubmit, Problem, t } from './lib.js';

const ROLE_MESSAGES = ['role_in_use', 'role_not_found'];

function worded(err) {
  if (err instanceof Problem && ROLE_MESSAGES.includes(err.code)) return t(`js.admin-orgs.${err.code}`);
  return err instanceof Problem && err.code === 'validation_failed' ? err : explain(err);
}

function edit(role) {
  const form = $('#role-form');
  form.elements.name.value = role.name;
  form.elements.description.value = role.description ?? '';
  form.elements.permissions.value = role.permissions.join(' ');
  focusOn($('#role-form-title'));
}

async function remove(role) {
  const yes = await confirmAction({
    title: t('js.admin-orgs.delete_role_title', { name: role.name }),
    text: t('js.admin-orgs.delete_role_text'),
    yes: t('js.admin-orgs.delete_role_yes'),
  });
  if (!yes) return;
  try {
    await call(`/api/v1/roles/${encodeURIComponent(role.name)}`, { method: 'DELETE' });
    notify(t('js.admin-orgs.role_deleted', { name: role.name }));
    await showRoles();
  } catch (err) {
    fail($('#roles-error'), worded(err));
  }
}

function roleRow(role) {
  const tr = document.createElement('tr');
  tr.append(
    ltr(cell(role.name)),
    cell(role.description || '—'),
    ltr(cell(role.permissions.join(' ') || '—')),
    rowButton(t('js.admin-orgs.edit'), t('js.admin-orgs.edit_role', { name: role.name }), () => edit(role)),
    rowButton(
      t('js.admin-orgs.delete'),
      t('js.admin-orgs.delete_role', { name: role.name }),
      () => remove(role),
      'danger small',
    ),
  );
  return tr;
}

/** The roles view: the catalogue, oldest names first as the API lists them. */
export async function showRoles() {
  $('#roles-error').textContent = '';
  try {
    const { data } = await call('/api/v1/roles');
    fillTable($('#roles-body'), data.map(roleRow), t('js.admin-orgs.no_roles'), 5);
    return data;
  } catch (err) {
    fail($('#roles-error'), err);
    return [];
  }
}

export function initRoles() {
  const form = $('#role-form');
  onSubmit(form, async (values) => {
    const name = values.name.trim();
    const body = { permissions: words(values.permissions) };
    if (values.description.trim()) body.description = values.description.trim();
    try {
      await call(`/api/v1/roles/${encodeURIComponent(name)}`, { method: 'PUT', body });
    } catch (err) {
      throw worded(err);
    }
    form.reset();
    notify(t('js.admin-orgs.role_saved', { name }));
    await showRoles();
  });
}
