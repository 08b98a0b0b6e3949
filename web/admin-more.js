// The other console views: add people (invite, create), modules with their toggles, audit trail.

import {
  call,
  can,
  cell,
  confirmAction,
  dayEnd,
  dayStart,
  explain,
  fail,
  isolate,
  loadModules,
  notify,
  PAGE_SIZE,
  updateModule,
  userHref,
} from './admin-core.js';
import { $, el, focusOn, formatDate, onSubmit, Problem, t } from './lib.js';

/** Rethrows a refusal as the console's sentence; field errors keep their marks. */
function worded(err) {
  return err.code === 'validation_failed' ? err : explain(err);
}

// --- Add people ---------------------------------------------------------------------------------

export function showNew() {
  $('#invite-section').hidden = !can('POST /api/v1/users/invite');
  $('#create-section').hidden = !can('POST /api/v1/users');
}

export function initNew() {
  onSubmit($('#invite-form'), async (values, form) => {
    const body = { email: values.email.trim(), role: values.role };
    if (values.name.trim()) body.name = values.name.trim();
    let answer;
    try {
      answer = await call('/api/v1/users/invite', { method: 'POST', body });
    } catch (err) {
      throw worded(err);
    }
    form.reset();
    notify(
      t('js.admin.new.invitation_sent', {
        email: isolate(answer.invitation.email),
        date: formatDate(answer.invitation.expires_at),
      }),
    );
  });
  onSubmit($('#create-form'), async (values) => {
    const body = { email: values.email.trim(), role: values.role };
    if (values.name.trim()) body.name = values.name.trim();
    if (values.password) body.password = values.password;
    let user;
    try {
      user = await call('/api/v1/users', { method: 'POST', body });
    } catch (err) {
      throw worded(err);
    }
    $('#create-form').reset();
    notify(t('js.admin.new.created', { email: isolate(user.email) }), { beforeNavigation: true });
    location.hash = userHref(user.id);
  });
}

// --- Modules ------------------------------------------------------------------------------------

function moduleItem(m, onToggle) {
  const li = el('li');
  const id = `module-${m.name}`;
  const text = el('div', null, { class: 'item-text' });
  const label = el('label', m.name, { for: id });
  // The API's description is English (API §24): the catalogs word the built-in modules' own.
  const description = t('js.admin.modules.description', { name: m.name, description: m.description });
  text.append(
    label,
    el('span', m.required ? t('js.admin.modules.required', { description }) : description, {
      class: 'muted',
      id: `${id}-desc`,
    }),
  );
  const toggle = el('input', null, {
    type: 'checkbox',
    role: 'switch',
    id,
    'aria-describedby': `${id}-desc`,
  });
  toggle.checked = m.enabled;
  toggle.disabled = m.required;
  toggle.addEventListener('change', () => onToggle(m, toggle));
  li.append(text, toggle);
  return li;
}

/**
 * Switching these off locks people out of the very page the switch is on (the console) or of the
 * sign-in every new console session goes through (pages): asked first, with the way back.
 */
const LOCKOUT = {
  console: 'js.admin.modules.lockout_console',
  pages: 'js.admin.modules.lockout_pages',
};

/**
 * PUT of the switch. Switching off a module whose factors accounts hold answers 409 `module_in_use`
 * (docs/api.md §16): its detail (how many accounts) is shown in a dialog, and only a confirmation
 * sends `force`. Resolves null when the admin keeps it on.
 */
async function putModule(m, enabled) {
  const path = `/api/v1/admin/modules/${encodeURIComponent(m.name)}`;
  if (!enabled && LOCKOUT[m.name] !== undefined) {
    const sure = await confirmAction({
      title: t('js.admin.modules.turn_off_title', { module: m.name }),
      text: t(LOCKOUT[m.name]),
      yes: t('js.admin.modules.turn_off', { module: m.name }),
    });
    if (!sure) return null;
  }
  try {
    return await call(path, { method: 'PUT', body: { enabled } });
  } catch (err) {
    if (enabled || !(err instanceof Problem) || err.code !== 'module_in_use') throw err;
    // The API's detail (English, API §24) says how many accounts and what they lose.
    const sure = await confirmAction({
      title: t('js.admin.modules.turn_off_title', { module: m.name }),
      text: `${err.message}.`,
      yes: t('js.admin.modules.turn_off_anyway', { module: m.name }),
    });
    if (!sure) return null;
    return call(path, { method: 'PUT', body: { enabled, force: true } });
  }
}

async function toggleModule(m, toggle) {
  const enabled = toggle.checked;
  $('#modules-error').textContent = '';
  toggle.disabled = true;
  try {
    const module = await putModule(m, enabled);
    if (module === null) {
      toggle.checked = !enabled;
      return;
    }
    updateModule(module);
    notify(t('js.admin.modules.state', { module: module.name, state: module.enabled ? 'on' : 'off' }));
    document.dispatchEvent(new CustomEvent('modules-changed'));
  } catch (err) {
    toggle.checked = !enabled;
    fail($('#modules-error'), err);
  } finally {
    toggle.disabled = m.required;
  }
}

export async function showModules() {
  try {
    const list = await loadModules();
    $('#modules-list').replaceChildren(...list.map((m) => moduleItem(m, toggleModule)));
  } catch (err) {
    fail($('#modules-error'), err);
  }
}

// --- Audit trail ----------------------------------------------------------------------------------

const auditForm = $('#audit-filters');
let auditCursors = [null];
let auditPage = 0;
let auditNext = null;

function auditRow(entry) {
  const tr = el('tr');
  // People by address (the API adds the current one); an id only once the account is gone.
  // Addresses, ids and codes read left to right in a right-to-left page too (not the words).
  const actor =
    entry.actor_type === 'user' && entry.actor_id
      ? cell(
          entry.actor_email ?? t('js.admin.audit.deleted_user', { id: entry.actor_id }),
          userHref(entry.actor_id),
          { ltr: Boolean(entry.actor_email) },
        )
      : cell(t('js.admin.audit.actor_type', { type: entry.actor_type }));
  const targetText =
    entry.target_type === 'user' && entry.target_id
      ? (entry.target_email ?? t('js.admin.audit.deleted_user', { id: entry.target_id }))
      : entry.target_id
        ? `${entry.target_type}: ${entry.target_id}`
        : '—';
  const target =
    entry.target_type === 'user' && entry.target_id
      ? cell(targetText, userHref(entry.target_id), { ltr: Boolean(entry.target_email) })
      : cell(targetText, undefined, { ltr: Boolean(entry.target_id) });
  tr.append(
    cell(formatDate(entry.at)),
    cell(entry.action, undefined, { ltr: true }),
    cell(t('js.admin.audit.outcome', { outcome: entry.outcome })),
    actor,
    target,
    cell(entry.ip ?? '—', undefined, { ltr: Boolean(entry.ip) }),
  );
  return tr;
}

async function loadAudit() {
  const region = auditForm.querySelector('[data-error]');
  region.textContent = '';
  const values = Object.fromEntries(new FormData(auditForm));
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  for (const name of ['action', 'outcome', 'actor', 'target']) {
    const value = String(values[name] ?? '').trim();
    if (value) params.set(name, value);
  }
  if (values.from) params.set('from', dayStart(values.from));
  if (values.to) params.set('to', dayEnd(values.to));
  const cursor = auditCursors[auditPage];
  if (cursor) params.set('cursor', cursor);
  try {
    const answer = await call(`/api/v1/admin/audit?${params}`);
    const body = $('#audit-body');
    body.replaceChildren(...answer.data.map(auditRow));
    if (answer.data.length === 0) {
      const td = el('td', t('js.admin.audit.none'));
      td.colSpan = 6;
      const tr = el('tr');
      tr.append(td);
      body.append(tr);
    }
    auditNext = answer.next_cursor;
    $('#audit-prev').disabled = auditPage === 0;
    $('#audit-next').disabled = auditNext === null;
  } catch (err) {
    fail(region, err);
  }
}

export function showAudit(query) {
  const target = query.get('target');
  if (target !== null) auditForm.elements.target.value = target;
  auditCursors = [null];
  auditPage = 0;
  return loadAudit();
}

export function initAudit() {
  auditForm.addEventListener('submit', (event) => {
    event.preventDefault();
    auditCursors = [null];
    auditPage = 0;
    loadAudit();
  });
  $('#audit-next').addEventListener('click', () => {
    if (auditNext === null) return;
    auditCursors = auditCursors.slice(0, auditPage + 1);
    auditCursors.push(auditNext);
    auditPage += 1;
    loadAudit().then(() => focusOn($('#audit-title')));
  });
  $('#audit-prev').addEventListener('click', () => {
    if (auditPage === 0) return;
    auditPage -= 1;
    loadAudit();
  });
}
