// One organization (docs/console.md): its settings (name, slug, domains, join by domain, default
// roles, second factor, metadata), members (add, change roles, remove), invitations (invite,
// revoke) and deleting it. Every call is one of docs/api.md §21.

import {
  call,
  cell,
  confirmAction,
  fail,
  fillTable,
  notify,
  PAGE_SIZE,
  rowButton,
  userHref,
  words,
} from './admin-core.js';
import { ownerKeysLink } from './admin-keys.js';
import { orgWorded } from './admin-orgs.js';
import { $, el, focusOn, formatDate, ltr, onSubmit, t } from './lib.js';

let org = null;
let membersCursor = null;

const path = (suffix = '') => `/api/v1/organizations/${encodeURIComponent(org.id)}${suffix}`;

function fill(o) {
  org = o;
  $('#org-title').textContent = o.name;
  $('#org-id').textContent = o.id;
  $('#org-members-count').textContent = t('js.admin-orgs.members_count', { count: o.member_count });
  $('#org-created').textContent = formatDate(o.created_at);
  const f = $('#org-edit').elements;
  f.name.value = o.name;
  f.slug.value = o.slug;
  f.domains.value = o.domains.join(' ');
  f.join_by_domain.checked = o.join_by_domain;
  f.default_roles.value = o.default_roles.join(' ');
  f.require_mfa.checked = o.require_mfa;
  f.metadata.value = JSON.stringify(o.metadata, null, 2);
}

// --- Members ------------------------------------------------------------------------------------

function memberRow(m) {
  const tr = el('tr');
  tr.append(
    ltr(cell(m.user.email, userHref(m.user.id))),
    cell(m.user.name || '—'),
    ltr(cell(m.roles.join(' ') || '—')),
    cell(formatDate(m.joined_at)),
    rowButton(
      t('js.admin-orgs.change_roles'),
      t('js.admin-orgs.change_roles_of', { email: m.user.email }),
      () => {
        const form = $('#org-member-form');
        form.elements.who.value = m.user.email;
        form.elements.roles.value = m.roles.join(' ');
        form.elements.roles.focus();
      },
    ),
    rowButton(
      t('js.admin-orgs.remove'),
      t('js.admin-orgs.remove_from_org', { email: m.user.email }),
      () => removeMember(m),
      'danger small',
    ),
  );
  return tr;
}

async function loadMembers({ more = false } = {}) {
  $('#org-members-error').textContent = '';
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (more && membersCursor) params.set('cursor', membersCursor);
  try {
    const page = await call(path(`/members?${params}`));
    const rows = page.data.map(memberRow);
    if (more) $('#org-members-body').append(...rows);
    else fillTable($('#org-members-body'), rows, t('js.admin-orgs.no_members'), 6);
    membersCursor = page.next_cursor ?? null;
    $('#org-members-more').hidden = membersCursor === null;
  } catch (err) {
    fail($('#org-members-error'), orgWorded(err));
  }
}

async function removeMember(m) {
  const yes = await confirmAction({
    title: t('js.admin-orgs.remove_title', { email: m.user.email }),
    text: t('js.admin-orgs.remove_text', { name: org.name }),
    yes: t('js.admin-orgs.remove_yes'),
  });
  if (!yes) return;
  try {
    await call(path(`/members/${encodeURIComponent(m.user.id)}`), { method: 'DELETE' });
    notify(t('js.admin-orgs.removed', { email: m.user.email }));
    await refresh();
  } catch (err) {
    fail($('#org-members-error'), orgWorded(err));
  }
}

/** A user id from the form: the id itself, or the account with exactly this e-mail address. */
async function userIdOf(who) {
  if (!who.includes('@')) return who;
  const params = new URLSearchParams({ q: who, limit: '10' });
  const { data } = await call(`/api/v1/users/search?${params}`);
  const found = data.find((u) => u.email.toLowerCase() === who.toLowerCase());
  if (!found) throw t('js.admin-orgs.no_account');
  return found.id;
}

// --- Invitations --------------------------------------------------------------------------------

function invitationRow(i) {
  const tr = el('tr');
  tr.append(
    ltr(cell(i.email)),
    ltr(cell(i.roles.join(' ') || '—')),
    cell(i.invited_by ? i.invited_by.name || i.invited_by.id : '—'),
    cell(formatDate(i.expires_at)),
    rowButton(
      t('js.admin-orgs.revoke'),
      t('js.admin-orgs.revoke_label', { email: i.email }),
      () => revoke(i),
      'danger small',
    ),
  );
  return tr;
}

async function loadInvitations() {
  $('#org-invitations-error').textContent = '';
  try {
    const { data } = await call(path('/invitations'));
    fillTable($('#org-invitations-body'), data.map(invitationRow), t('js.admin-orgs.no_invitations'), 5);
  } catch (err) {
    fail($('#org-invitations-error'), orgWorded(err));
  }
}

async function revoke(i) {
  const yes = await confirmAction({
    title: t('js.admin-orgs.revoke_title', { email: i.email }),
    text: t('js.admin-orgs.revoke_text'),
    yes: t('js.admin-orgs.revoke_yes'),
  });
  if (!yes) return;
  try {
    await call(path(`/invitations/${encodeURIComponent(i.id)}`), { method: 'DELETE' });
    notify(t('js.admin-orgs.revoked', { email: i.email }));
    await loadInvitations();
  } catch (err) {
    fail($('#org-invitations-error'), orgWorded(err));
  }
}

// --- The page -----------------------------------------------------------------------------------

async function refresh() {
  fill(await call(path()));
  await Promise.all([loadMembers(), loadInvitations()]);
}

/** `#/organizations/<id>`. */
export async function showOrganization(id) {
  $('#org-error').textContent = '';
  $('#org-body').hidden = true;
  $('#org-invite-link').hidden = true;
  $('#org-title').textContent = t('js.admin-orgs.organization');
  try {
    org = { id };
    await refresh();
    ownerKeysLink($('#org-edit-title').parentElement, 'organization', id);
    $('#org-body').hidden = false;
    focusOn($('#org-title'));
  } catch (err) {
    fail($('#org-error'), orgWorded(err));
  }
}

function metadataOf(text) {
  const trimmed = text.trim();
  if (!trimmed) return {};
  try {
    const value = JSON.parse(trimmed);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    // Said below.
  }
  throw t('js.admin-orgs.metadata_object');
}

export function initOrganization() {
  onSubmit($('#org-edit'), async (values, form) => {
    const body = {
      name: values.name.trim(),
      slug: values.slug.trim(),
      domains: words(values.domains),
      join_by_domain: form.elements.join_by_domain.checked,
      default_roles: words(values.default_roles),
      require_mfa: form.elements.require_mfa.checked,
      metadata: metadataOf(values.metadata),
    };
    try {
      fill(await call(path(), { method: 'PATCH', body }));
    } catch (err) {
      throw orgWorded(err);
    }
    notify(t('js.admin-orgs.settings_saved'));
  });
  onSubmit($('#org-member-form'), async (values, form) => {
    const userId = await userIdOf(values.who.trim());
    try {
      await call(path(`/members/${encodeURIComponent(userId)}`), {
        method: 'PUT',
        body: { roles: words(values.roles) },
      });
    } catch (err) {
      throw orgWorded(err);
    }
    form.elements.who.value = '';
    notify(t('js.admin-orgs.member_saved'));
    await refresh();
  });
  onSubmit($('#org-invite-form'), async (values, form) => {
    let made;
    try {
      made = await call(path('/invitations'), {
        method: 'POST',
        body: { email: values.email.trim(), roles: words(values.roles) },
      });
    } catch (err) {
      throw orgWorded(err);
    }
    form.elements.email.value = '';
    // An admin's answer carries the link too, for handing it over another way.
    $('#org-invite-url').textContent = made.invite_url ?? '';
    $('#org-invite-link').hidden = !made.invite_url;
    notify(t('js.admin-orgs.invitation_sent', { email: made.email }));
    await loadInvitations();
  });
  $('#org-members-more').addEventListener('click', () => loadMembers({ more: true }));
  $('#org-delete').addEventListener('click', async () => {
    const yes = await confirmAction({
      title: t('js.admin-orgs.delete_title', { name: org.name }),
      text: t('js.admin-orgs.delete_text'),
      yes: t('js.admin-orgs.delete_yes'),
    });
    if (!yes) return;
    try {
      await call(path(), { method: 'DELETE' });
      notify(t('js.admin-orgs.deleted', { name: org.name }), { beforeNavigation: true });
      location.hash = '#/organizations';
    } catch (err) {
      fail($('#org-delete-error'), orgWorded(err));
    }
  });
}
