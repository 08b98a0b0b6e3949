// The users view: stats cards, filters, search as you type, and the table over the keyset-paginated
// list. Each page is one call with `limit` and the cursor of the page before it; nothing ever loads
// more than a page, however many users there are (docs/console.md).

import { call, cell, dayEnd, dayStart, fail, isolate, PAGE_SIZE, userHref } from './admin-core.js';
import { $, el, formatDate, lang, t } from './lib.js';

const SEARCH_DELAY_MS = 250;
const form = $('#filters');
const numbers = new Intl.NumberFormat(lang);

/** cursors[i] is the cursor that fetches page i (null for the first page). */
let cursors = [null];
let page = 0;
let nextCursor = null;
/** Only the newest request may fill the table (an older, slower answer is dropped). */
let generation = 0;
let typing = 0;
let loadedOnce = false;

function filters() {
  const values = Object.fromEntries(new FormData(form));
  return { ...values, q: String(values.q ?? '').trim() };
}

/** The one API call of the current page: search when there is a query, else the list. */
function pagePath() {
  const f = filters();
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (f.q) params.set('q', f.q);
  if (f.role) params.set('role', f.role);
  if (f.status) params.set('status', f.status);
  if (!f.q) {
    params.set('sort', f.sort || '-created_at');
    if (f.created_after) params.set('created_after', dayStart(f.created_after));
    if (f.created_before) params.set('created_before', dayEnd(f.created_before));
  }
  const cursor = cursors[page];
  if (cursor) params.set('cursor', cursor);
  return `/api/v1/users${f.q ? '/search' : ''}?${params}`;
}

function row(user) {
  const tr = el('tr');
  tr.append(
    // A service account has no e-mail address (API §22): its name names the link.
    cell(user.email ?? user.name ?? user.id, userHref(user.id), { ltr: Boolean(user.email) }),
    cell(user.name || '—'),
    cell(t('js.admin.role', { role: user.role })),
    cell(t('js.admin.status', { status: user.status })),
    cell(formatDate(user.created_at)),
    cell(formatDate(user.last_login_at)),
  );
  return tr;
}

async function loadPage() {
  const mine = ++generation;
  const f = filters();
  // Sorting and dates apply to the list; a search is ordered by relevance.
  for (const field of form.querySelectorAll('[data-list-only]')) field.hidden = Boolean(f.q);
  $('#result-summary').textContent = t('js.admin.users.loading');
  form.setAttribute('aria-busy', 'true');
  try {
    const answer = await call(pagePath());
    if (mine !== generation) return;
    const body = $('#users-body');
    body.replaceChildren(...answer.data.map(row));
    if (answer.data.length === 0) {
      const td = el('td', t(f.q ? 'js.admin.users.none_search' : 'js.admin.users.none'));
      td.colSpan = 6;
      const tr = el('tr');
      tr.append(td);
      body.append(tr);
    }
    nextCursor = answer.next_cursor;
    const at = { count: answer.total, page: page + 1 };
    $('#result-summary').textContent = f.q
      ? t('js.admin.users.summary_search', { ...at, q: isolate(f.q) })
      : t('js.admin.users.summary', at);
    $('#page-label').textContent = t('js.admin.users.page', at);
    $('#users-caption').textContent = f.q
      ? t('js.admin.users.caption_search', { q: isolate(f.q) })
      : t('js.admin.users.caption');
    $('#prev-page').disabled = page === 0;
    $('#next-page').disabled = nextCursor === null;
    form.querySelector('[data-error]').textContent = '';
  } catch (err) {
    if (mine !== generation) return;
    $('#result-summary').textContent = '';
    fail(form.querySelector('[data-error]'), err);
  } finally {
    if (mine === generation) form.removeAttribute('aria-busy');
  }
}

/** New filters start again at the first page. */
function restart() {
  cursors = [null];
  page = 0;
  return loadPage();
}

function card(label, value, detail) {
  const li = el('li', null, { class: 'stat' });
  li.append(
    el('span', numbers.format(value), { class: 'stat-value' }),
    el('span', label, { class: 'stat-label' }),
  );
  if (detail) li.append(el('span', detail, { class: 'stat-detail muted' }));
  return li;
}

async function loadStats() {
  try {
    const s = await call('/api/v1/users/stats');
    $('#stats').replaceChildren(
      card(t('js.admin.stats.users'), s.total),
      card(
        t('js.admin.stats.active'),
        s.by_status.active,
        t('js.admin.stats.signed_in_this_week', { count: s.active.last_7d }),
      ),
      card(t('js.admin.stats.invited'), s.by_status.invited),
      card(t('js.admin.stats.disabled'), s.by_status.disabled),
      card(t('js.admin.stats.admins'), s.by_role.admin),
      card(
        t('js.admin.stats.new_this_week'),
        s.created.last_7d,
        t('js.admin.stats.in_30_days', { count: s.created.last_30d }),
      ),
    );
  } catch (err) {
    fail(form.querySelector('[data-error]'), err);
  }
}

export function initUsers() {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(typing);
    restart();
  });
  // Search as you type: one call once typing pauses, never one per key.
  $('#q').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(restart, SEARCH_DELAY_MS);
  });
  for (const select of form.querySelectorAll('select, input[type="date"]')) {
    select.addEventListener('change', () => {
      clearTimeout(typing);
      restart();
    });
  }
  $('#next-page').addEventListener('click', () => {
    if (nextCursor === null) return;
    cursors = cursors.slice(0, page + 1);
    cursors.push(nextCursor);
    page += 1;
    loadPage().then(() => $('#users-table').focus());
  });
  $('#prev-page').addEventListener('click', () => {
    if (page === 0) return;
    page -= 1;
    loadPage();
  });
  $('#users-table').setAttribute('tabindex', '-1');
}

/** Shows the view: the stats and the current page again (a change elsewhere may show in both). */
export function showUsers() {
  loadStats();
  loadedOnce = true;
  return loadPage();
}

export function usersLoaded() {
  return loadedOnce;
}
