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
import { $, focusOn, onSubmit, Problem } from './lib.js';

const ROLE_MESSAGES = {
  role_in_use: 'Someone still holds this role (in an organization or globally). Take it from them first.',
  role_not_found: 'This role does not exist any more.',
};

function worded(err) {
  if (err instanceof Problem && ROLE_MESSAGES[err.code]) return ROLE_MESSAGES[err.code];
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
    title: `Delete the role ${role.name}?`,
    text: 'Nobody may hold it any more; a role still held is refused.',
    yes: 'Delete role',
  });
  if (!yes) return;
  try {
    await call(`/api/v1/roles/${encodeURIComponent(role.name)}`, { method: 'DELETE' });
    notify(`The role ${role.name} was deleted.`);
    await showRoles();
  } catch (err) {
    fail($('#roles-error'), worded(err));
  }
}

function roleRow(role) {
  const tr = document.createElement('tr');
  tr.append(
    cell(role.name),
    cell(role.description || '—'),
    cell(role.permissions.join(' ') || '—'),
    rowButton('Edit', `Edit the role ${role.name}`, () => edit(role)),
    rowButton('Delete', `Delete the role ${role.name}`, () => remove(role), 'danger small'),
  );
  return tr;
}

/** The roles view: the catalogue, oldest names first as the API lists them. */
export async function showRoles() {
  $('#roles-error').textContent = '';
  try {
    const { data } = await call('/api/v1/roles');
    fillTable($('#roles-body'), data.map(roleRow), 'No roles yet.', 5);
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
    notify(`The role ${name} was saved.`);
    await showRoles();
  });
}
