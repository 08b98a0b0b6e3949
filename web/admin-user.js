// One user's page: facts, quick actions (enable/disable, reset-password mail, reset second factors),
// the edit form, sessions with revoke, linked identities and delete with confirmation.

import { built, call, can, confirmAction, explain, fail, isolate, notify } from './admin-core.js';
import { ownerKeysLink } from './admin-keys.js';
import { $, clearError, deviceName, el, focusOn, formatDate, onSubmit, t } from './lib.js';

let user = null;
const path = (suffix = '') => `/api/v1/users/${encodeURIComponent(user.id)}${suffix}`;
/** The person's address inside a sentence. */
const who = () => isolate(user.email ?? user.name ?? user.id);
/** A service account (API §22) has no address, password or second factors: those controls go. */
const service = () => user?.kind === 'service';

function fill(u) {
  user = u;
  $('#user-title').textContent = u.name || u.email || u.id;
  $('#u-email').textContent = u.email ?? '—';
  $('#u-verified').hidden = u.kind === 'service';
  $('#u-verified').textContent = t(
    u.email_verified ? 'js.admin.user.confirmed' : 'js.admin.user.not_confirmed',
  );
  $('#u-name').textContent = u.name || '—';
  $('#u-role').textContent = t('js.admin.role', { role: u.role });
  $('#u-status').textContent = t('js.admin.status', { status: u.status });
  $('#u-created').textContent = formatDate(u.created_at);
  $('#u-login').textContent = formatDate(u.last_login_at);
  $('#u-id').textContent = u.id;
  const toggle = $('#toggle-status');
  toggle.hidden = u.status === 'invited';
  toggle.textContent = t(u.status === 'disabled' ? 'js.admin.user.enable' : 'js.admin.user.disable');
  toggle.className = u.status === 'disabled' ? '' : 'danger';
  const form = $('#edit-form');
  form.elements.name.value = u.name;
  form.elements.email.value = u.email ?? '';
  // Without this a service account's form could never be saved: its empty address is required.
  $('#e-email-field').hidden = u.kind === 'service';
  form.elements.email.required = u.kind !== 'service';
  form.elements.role.value = u.role;
  // `invited` belongs to the invitation flow: an admin enables or disables accounts only.
  $('#e-status-field').hidden = u.status === 'invited';
  form.elements.status.value = u.status === 'disabled' ? 'disabled' : 'active';
  form.elements.email_verified.checked = u.email_verified;
}

function sessionItem(s) {
  const li = el('li');
  const text = el('div', null, { class: 'item-text' });
  text.append(
    el('strong', deviceName(s.user_agent), { title: s.user_agent ?? '' }),
    el(
      'span',
      t('js.admin.user.session', {
        ip: s.ip ? isolate(s.ip) : t('js.admin.user.unknown_address'),
        created: formatDate(s.created_at),
        used: formatDate(s.last_used_at),
      }),
      { class: 'muted' },
    ),
  );
  const revoke = el('button', t('js.admin.user.revoke'), { type: 'button', class: 'secondary small' });
  revoke.setAttribute(
    'aria-label',
    t('js.admin.user.revoke_label', { device: deviceName(s.user_agent), date: formatDate(s.created_at) }),
  );
  revoke.addEventListener('click', async () => {
    try {
      await call(path(`/sessions/${encodeURIComponent(s.id)}`), { method: 'DELETE' });
      notify(t('js.admin.user.session_revoked'));
      await loadSessions();
      focusOn($('#sessions-title'));
    } catch (err) {
      fail($('#u-sessions-error'), err);
    }
  });
  li.append(text, revoke);
  return li;
}

async function loadSessions() {
  const section = $('#u-sessions-section');
  section.hidden = !can('GET /api/v1/users/<id>/sessions');
  if (section.hidden) return;
  $('#u-sessions-error').textContent = '';
  try {
    const { data } = await call(path('/sessions'));
    const list = $('#u-sessions');
    list.replaceChildren(...data.map(sessionItem));
    if (data.length === 0) list.append(el('li', t('js.admin.user.no_sessions')));
  } catch (err) {
    fail($('#u-sessions-error'), err);
  }
}

async function loadIdentities() {
  const list = $('#u-identities');
  try {
    const { data } = await call(path('/identities'));
    list.replaceChildren(
      ...data.map((i) =>
        el(
          'li',
          t('js.admin.user.identity', {
            issuer: isolate(i.issuer),
            subject: isolate(i.subject),
            date: formatDate(i.linked_at),
          }),
        ),
      ),
    );
    if (data.length === 0) list.append(el('li', t('js.admin.user.no_identities')));
  } catch (err) {
    list.replaceChildren(el('li', t('js.admin.user.identities_failed', { reason: explain(err) })));
  }
}

/** Shows the controls whose endpoints this service answers now. */
function showControls() {
  $('#reset-password').hidden = service() || !can('POST /api/v1/users/<id>/password-reset');
  $('#reset-mfa').hidden = service() || !can('DELETE /api/v1/users/<id>/mfa');
  $('#unlock').hidden = !can('POST /api/v1/users/<id>/unlock');
  $('#delete-section').hidden = !can('DELETE /api/v1/users/<id>');
  // An invited person who lost the mail (or let it expire) gets a new link: inviting the address
  // again replaces the old link (docs/invitations.md).
  $('#resend-invitation').hidden = user.status !== 'invited' || !can('POST /api/v1/users/invite');
  // The flag is a field of the user update that arrives with e-mail ownership (docs/api.md §12).
  $('#e-verified-field').hidden = service() || !built('email');
  const audit = $('#user-audit');
  audit.hidden = !can('GET /api/v1/admin/audit');
  audit.setAttribute('href', `#/audit?target=${encodeURIComponent(user.id)}`);
  ownerKeysLink(audit.parentElement, 'user', user.id);
}

export async function showUser(id) {
  user = null;
  $('#user-body').hidden = true;
  $('#user-error').textContent = '';
  for (const region of $('#view-user').querySelectorAll('[data-error]')) region.textContent = '';
  clearError($('#edit-form'));
  $('#user-title').textContent = t('js.admin.user.title');
  try {
    fill(await call(`/api/v1/users/${encodeURIComponent(id)}`));
  } catch (err) {
    fail($('#user-error'), err);
    focusOn($('#user-title'));
    return;
  }
  showControls();
  $('#user-body').hidden = false;
  focusOn($('#user-title'));
  await Promise.all([loadSessions(), loadIdentities()]);
}

/** One PUT with only what changed. */
function changes(values) {
  const patch = {};
  if (values.name.trim() !== user.name) patch.name = values.name.trim();
  if (!service() && values.email.trim() !== user.email) patch.email = values.email.trim();
  if (values.role !== user.role) patch.role = values.role;
  if (user.status !== 'invited' && values.status !== user.status) patch.status = values.status;
  const verified = $('#e-verified').checked;
  if (!$('#e-verified-field').hidden && verified !== user.email_verified) patch.email_verified = verified;
  return patch;
}

async function quick(action) {
  $('#quick-error').textContent = '';
  try {
    await action();
  } catch (err) {
    fail($('#quick-error'), err);
  }
}

/** Disabling signs a person out everywhere: asked first, as deleting is. */
function confirmDisable() {
  return confirmAction({
    title: t('js.admin.user.disable_title', { email: who() }),
    text: t('js.admin.user.disable_text'),
    yes: t('js.admin.user.disable'),
  });
}

export function initUser() {
  onSubmit($('#edit-form'), async (values) => {
    const patch = changes(values);
    if (Object.keys(patch).length === 0) {
      notify(t('js.admin.user.nothing_to_save'));
      return;
    }
    if (patch.status === 'disabled' && !(await confirmDisable())) return;
    try {
      fill(await call(path(), { method: 'PUT', body: patch }));
    } catch (err) {
      // The console's sentence (the last-admin guard, a taken address); field errors stay marked.
      throw err.code === 'validation_failed' ? err : explain(err);
    }
    notify(t('js.admin.user.saved'));
    if (patch.status === 'disabled') await loadSessions();
  });

  $('#toggle-status').addEventListener('click', () =>
    quick(async () => {
      const status = user.status === 'disabled' ? 'active' : 'disabled';
      if (status === 'disabled' && !(await confirmDisable())) return;
      fill(await call(path(), { method: 'PUT', body: { status } }));
      notify(
        t(status === 'disabled' ? 'js.admin.user.disabled_done' : 'js.admin.user.enabled_done', {
          email: who(),
        }),
      );
      await loadSessions();
    }),
  );

  $('#resend-invitation').addEventListener('click', () =>
    quick(async () => {
      const body = { email: user.email, role: user.role };
      if (user.name) body.name = user.name;
      const { invitation } = await call('/api/v1/users/invite', { method: 'POST', body });
      notify(t('js.admin.user.invitation_again', { email: who(), date: formatDate(invitation.expires_at) }));
    }),
  );

  $('#reset-password').addEventListener('click', () =>
    quick(async () => {
      const { expires_at } = await call(path('/password-reset'), { method: 'POST' });
      notify(t('js.admin.user.reset_sent', { email: who(), date: formatDate(expires_at) }));
    }),
  );

  $('#unlock').addEventListener('click', () =>
    quick(async () => {
      await call(path('/unlock'), { method: 'POST' });
      notify(t('js.admin.user.unlocked', { email: who() }));
    }),
  );

  $('#reset-mfa').addEventListener('click', () =>
    quick(async () => {
      const ok = await confirmAction({
        title: t('js.admin.user.reset_mfa_title'),
        text: t('js.admin.user.reset_mfa_text', { email: who() }),
        yes: t('js.admin.user.reset_mfa_yes'),
      });
      if (!ok) return;
      await call(path('/mfa'), { method: 'DELETE' });
      notify(t('js.admin.user.mfa_removed', { email: who() }));
      await loadSessions();
    }),
  );

  $('#delete-user').addEventListener('click', async () => {
    $('#delete-error').textContent = '';
    const ok = await confirmAction({
      title: t('js.admin.user.delete_title', { email: who() }),
      text: t('js.admin.user.delete_text'),
      yes: t('js.admin.user.delete_yes'),
    });
    if (!ok) return;
    try {
      await call(path(), { method: 'DELETE' });
      notify(t('js.admin.user.deleted', { email: who() }), { beforeNavigation: true });
      location.hash = '#/users';
    } catch (err) {
      fail($('#delete-error'), err);
      focusOn($('#delete-error'));
    }
  });
}
