// Organizations (docs/console.md): the list (search by name or slug as you type, keyset pages of
// PAGE_SIZE) and creating one. One organization's page is admin-org.js. Every call is one of
// docs/api.md §21.

import { call, cell, explain, fail, fillTable, notify, PAGE_SIZE } from './admin-core.js';
import { $, el, formatDate, ltr, onSubmit, Problem, t } from './lib.js';

const SEARCH_DELAY_MS = 250;

/** cursors[i] fetches page i (null: the first). */
let cursors = [null];
let page = 0;
let nextCursor = null;
let generation = 0;
let typing = 0;

export const orgHref = (id) => `#/organizations/${encodeURIComponent(id)}`;

/** The console's sentence for an organization refusal (the API's own for a validation). */
export function orgWorded(err) {
  if (err instanceof Problem) {
    if (err.code === 'organization_exists') {
      return t('js.admin-orgs.organization_exists');
    }
    if (err.code === 'organization_not_found') return t('js.admin-orgs.organization_not_found');
    if (err.code === 'role_not_found') return err.message;
    if (err.code === 'last_manager') {
      return t('js.admin-orgs.last_manager');
    }
    if (err.code === 'already_member') return t('js.admin-orgs.already_member');
    if (err.code === 'validation_failed') return err;
  }
  return explain(err);
}

function row(org) {
  const tr = el('tr');
  tr.append(
    cell(org.name, orgHref(org.id)),
    ltr(cell(org.slug)),
    cell(t('js.admin-orgs.number', { value: org.member_count })),
    cell(org.require_mfa ? t('js.admin-orgs.required') : '—'),
    cell(formatDate(org.created_at)),
  );
  return tr;
}

async function loadPage() {
  const mine = ++generation;
  $('#orgs-error').textContent = '';
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  const q = $('#orgs-q').value.trim();
  if (q) params.set('q', q);
  if (cursors[page]) params.set('cursor', cursors[page]);
  try {
    const answer = await call(`/api/v1/organizations?${params}`);
    // Only the newest request fills the table (an older, slower answer is dropped).
    if (mine !== generation) return;
    fillTable(
      $('#orgs-body'),
      answer.data.map(row),
      t(q ? 'js.admin-orgs.no_match' : 'js.admin-orgs.no_organizations'),
      5,
    );
    nextCursor = answer.next_cursor ?? null;
    $('#orgs-prev').disabled = page === 0;
    $('#orgs-next').disabled = nextCursor === null;
    $('#orgs-page').textContent = t('js.admin-orgs.page', { page: page + 1 });
  } catch (err) {
    if (mine === generation) fail($('#orgs-error'), err);
  }
}

/** The organizations view, from its first page. */
export function showOrganizations() {
  cursors = [null];
  page = 0;
  return loadPage();
}

export function initOrganizations() {
  $('#orgs-filter').addEventListener('submit', (event) => event.preventDefault());
  $('#orgs-q').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(showOrganizations, SEARCH_DELAY_MS);
  });
  $('#orgs-next').addEventListener('click', () => {
    if (nextCursor === null) return;
    cursors[page + 1] = nextCursor;
    page += 1;
    loadPage();
  });
  $('#orgs-prev').addEventListener('click', () => {
    if (page === 0) return;
    page -= 1;
    loadPage();
  });
  onSubmit($('#org-create'), async (values, form) => {
    const body = { name: values.name.trim() };
    if (values.slug.trim()) body.slug = values.slug.trim();
    let created;
    try {
      created = await call('/api/v1/organizations', { method: 'POST', body });
    } catch (err) {
      throw orgWorded(err);
    }
    form.reset();
    notify(t('js.admin-orgs.created', { name: created.name }), { beforeNavigation: true });
    location.hash = orgHref(created.id);
  });
}
