// The users view: stats cards, filters, search as you type, and the table over the keyset-paginated
// list. Each page is one call with `limit` and the cursor of the page before it; nothing ever loads
// more than a page, however many users there are (docs/console.md).

import { call, cell, dayEnd, dayStart, fail, PAGE_SIZE, userHref } from './admin-core.js';
import { $, el, formatDate } from './lib.js';

const SEARCH_DELAY_MS = 250;
const form = $('#filters');
const numbers = new Intl.NumberFormat();

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
    cell(user.email ?? user.name ?? user.id, userHref(user.id)),
    cell(user.name || '—'),
    cell(user.role),
    cell(user.status),
    cell(formatDate(user.created_at)),
    cell(user.last_login_at ? formatDate(user.last_login_at) : 'never'),
  );
  return tr;
}

async function loadPage() {
  const mine = ++generation;
  const f = filters();
  // Sorting and dates apply to the list; a search is ordered by relevance.
  for (const field of form.querySelectorAll('[data-list-only]')) field.hidden = Boolean(f.q);
  $('#result-summary').textContent = 'Loading…';
  form.setAttribute('aria-busy', 'true');
  try {
    const answer = await call(pagePath());
    if (mine !== generation) return;
    const body = $('#users-body');
    body.replaceChildren(...answer.data.map(row));
    if (answer.data.length === 0) {
      const td = el('td', f.q ? 'No user matches this search.' : 'No users match these filters.');
      td.colSpan = 6;
      const tr = el('tr');
      tr.append(td);
      body.append(tr);
    }
    nextCursor = answer.next_cursor;
    const noun = answer.total === 1 ? 'user' : 'users';
    const what = f.q
      ? `${numbers.format(answer.total)} ${noun} match “${f.q}”, best matches first`
      : `${numbers.format(answer.total)} ${noun}`;
    $('#result-summary').textContent = `${what}. Page ${page + 1}.`;
    $('#page-label').textContent = `Page ${page + 1}`;
    $('#users-caption').textContent = f.q ? `Users matching “${f.q}”` : 'Users';
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
      card('users', s.total),
      card('active', s.by_status.active, `${numbers.format(s.active.last_7d)} signed in this week`),
      card('invited', s.by_status.invited),
      card('disabled', s.by_status.disabled),
      card('admins', s.by_role.admin),
      card('new this week', s.created.last_7d, `${numbers.format(s.created.last_30d)} in 30 days`),
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
