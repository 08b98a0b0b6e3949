// Webhooks (docs/console.md): endpoints, their signing secret (shown once), a test event, the
// delivery log with retry, and the notice of an endpoint disabled after 5 days of failures. Every
// call is one of docs/api.md §19.

import {
  call,
  cell,
  confirmAction,
  explain,
  fail,
  fillTable,
  hideSecret,
  notify,
  rowButton,
  showSecret,
  words,
} from './admin-core.js';
import { $, clearError, el, focusOn, formatDate, ltr, onSubmit, Problem, t } from './lib.js';

const LOG_PAGE = 20;
/** How long the log follows a planned attempt (first try within 5 s of the commit, 10 s timeout). */
const WATCH_ROUNDS = 30;

let hook = null;
/** A secret from the create answer, shown by the endpoint's page it leads to, then forgotten. */
let carriedSecret = null;
let logCursor = null;
let watching = 0;

const path = (suffix = '') => `/api/v1/webhooks/${encodeURIComponent(hook.id)}${suffix}`;
const hookHref = (id) => `#/webhooks/${encodeURIComponent(id)}`;

function statusText(h) {
  if (h.enabled) return t('js.admin-webhooks.enabled');
  return t(
    h.disabled_reason === 'failing' ? 'js.admin-webhooks.disabled_failing' : 'js.admin-webhooks.disabled',
  );
}

/** A delivery's status (pending, delivered, failed) in the page's language. */
const deliveryStatus = (status) => t('js.admin-webhooks.delivery_status', { status });

function worded(err) {
  return err instanceof Problem && err.code === 'validation_failed' ? err : explain(err);
}

// --- List ---------------------------------------------------------------------------------------

function hookRow(h) {
  const tr = el('tr');
  tr.append(
    ltr(cell(h.url, hookHref(h.id))),
    ltr(cell(h.events.join(' '))),
    cell(statusText(h)),
    cell(h.description || '—'),
    cell(formatDate(h.created_at)),
  );
  return tr;
}

export async function showWebhooks() {
  $('#webhooks-error').textContent = '';
  try {
    const { data } = await call('/api/v1/webhooks');
    fillTable($('#webhooks-body'), data.map(hookRow), t('js.admin-webhooks.no_endpoints'), 5);
  } catch (err) {
    fail($('#webhooks-error'), err);
  }
}

// --- One endpoint -------------------------------------------------------------------------------

function fill(h) {
  hook = h;
  $('#webhook-title').textContent = h.url;
  $('#webhook-title').dir = 'ltr';
  $('#wh-status').textContent = statusText(h);
  $('#wh-events-text').textContent = h.events.join(' ');
  $('#wh-created').textContent = formatDate(h.created_at);
  $('#wh-id').textContent = h.id;
  $('#webhook-auto-disabled').hidden = h.enabled || h.disabled_reason !== 'failing';
  const toggle = $('#webhook-toggle');
  toggle.textContent = t(h.enabled ? 'js.admin-webhooks.disable' : 'js.admin-webhooks.enable');
  toggle.className = h.enabled ? 'secondary' : '';
  const form = $('#webhook-edit');
  clearError(form);
  form.elements.url.value = h.url;
  form.elements.events.value = h.events.join(' ');
  form.elements.description.value = h.description;
}

function deliveryRow(d) {
  const tr = el('tr');
  const answer = d.response_code !== null ? `HTTP ${d.response_code}` : (d.error ?? '—');
  const event = ltr(cell(d.type));
  event.title = t('js.admin-webhooks.event_id', { id: d.event_id });
  tr.append(
    cell(formatDate(d.created_at)),
    event,
    cell(t('js.admin-webhooks.number', { value: d.attempt })),
    cell(deliveryStatus(d.status)),
    cell(answer),
    cell(d.duration_ms === null ? '—' : t('js.admin-webhooks.duration', { ms: d.duration_ms })),
    cell(d.next_attempt_at ? formatDate(d.next_attempt_at) : '—'),
  );
  if (d.status === 'pending') tr.append(el('td'));
  else
    tr.append(
      rowButton(
        t('js.admin-webhooks.retry'),
        t('js.admin-webhooks.retry_label', {
          type: d.type,
          attempt: d.attempt,
          status: deliveryStatus(d.status),
        }),
        () => retry(d),
      ),
    );
  return tr;
}

async function loadDeliveries({ more = false } = {}) {
  $('#deliveries-error').textContent = '';
  const params = new URLSearchParams({ limit: String(LOG_PAGE) });
  if (more && logCursor) params.set('cursor', logCursor);
  try {
    const page = await call(path(`/deliveries?${params}`));
    const rows = page.data.map(deliveryRow);
    if (more) $('#deliveries-body').append(...rows);
    else fillTable($('#deliveries-body'), rows, t('js.admin-webhooks.no_deliveries'), 8);
    logCursor = page.next_cursor;
    $('#deliveries-more').hidden = logCursor === null;
    return page.data;
  } catch (err) {
    fail($('#deliveries-error'), err);
    return [];
  }
}

/** Follows a planned attempt until it is delivered or failed (the log refreshes once a second). */
async function watch(attemptId) {
  const round = ++watching;
  const id = hook.id;
  for (let i = 0; i < WATCH_ROUNDS; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (round !== watching || hook?.id !== id || $('#view-webhook').hidden) return;
    const data = await loadDeliveries();
    const attempt = data.find((d) => d.id === attemptId);
    if (attempt && attempt.status !== 'pending') {
      notify(t('js.admin-webhooks.event_outcome', { type: attempt.type, status: attempt.status }));
      return;
    }
  }
}

async function retry(d) {
  try {
    const planned = await call(path(`/deliveries/${encodeURIComponent(d.id)}/retry`), { method: 'POST' });
    notify(t('js.admin-webhooks.retrying', { type: d.type, attempt: planned.attempt }));
    await loadDeliveries();
    focusOn($('#deliveries-title'));
    watch(planned.id);
  } catch (err) {
    fail($('#deliveries-error'), err);
  }
}

async function sendTest() {
  $('#webhook-actions-error').textContent = '';
  try {
    const planned = await call(path('/test'), { method: 'POST' });
    notify(t('js.admin-webhooks.test_sent'));
    await loadDeliveries();
    watch(planned.id);
  } catch (err) {
    fail($('#webhook-actions-error'), err);
  }
}

async function toggle() {
  $('#webhook-actions-error').textContent = '';
  try {
    fill(await call(path(), { method: 'PUT', body: { enabled: !hook.enabled } }));
    notify(t(hook.enabled ? 'js.admin-webhooks.now_enabled' : 'js.admin-webhooks.now_disabled'));
  } catch (err) {
    fail($('#webhook-actions-error'), err);
  }
}

async function rotate() {
  const sure = await confirmAction({
    title: t('js.admin-webhooks.rotate_title'),
    text: t('js.admin-webhooks.rotate_text'),
    yes: t('js.admin-webhooks.rotate_yes'),
  });
  if (!sure) return;
  try {
    const answer = await call(path('/secret'), { method: 'POST' });
    notify(t('js.admin-webhooks.rotated'));
    showSecret($('#webhook-secret'), answer.secret);
  } catch (err) {
    fail($('#webhook-actions-error'), err);
  }
}

async function remove() {
  const sure = await confirmAction({
    title: t('js.admin-webhooks.delete_title', { url: hook.url }),
    text: t('js.admin-webhooks.delete_text'),
    yes: t('js.admin-webhooks.delete_yes'),
  });
  if (!sure) return;
  try {
    await call(path(), { method: 'DELETE' });
    notify(t('js.admin-webhooks.deleted', { url: hook.url }), { beforeNavigation: true });
    location.hash = '#/webhooks';
  } catch (err) {
    fail($('#webhook-delete-error'), err);
  }
}

export async function showWebhook(id) {
  watching++;
  hook = null;
  logCursor = null;
  hideSecret($('#webhook-secret'));
  $('#webhook-body').hidden = true;
  $('#webhook-error').textContent = '';
  $('#webhook-title').textContent = t('js.admin-webhooks.webhook_endpoint');
  $('#webhook-title').removeAttribute('dir');
  focusOn($('#webhook-title'));
  try {
    fill(await call(`/api/v1/webhooks/${encodeURIComponent(id)}`));
  } catch (err) {
    fail($('#webhook-error'), err);
    return;
  }
  $('#webhook-body').hidden = false;
  if (carriedSecret !== null) {
    showSecret($('#webhook-secret'), carriedSecret);
    carriedSecret = null;
  }
  await loadDeliveries();
}

export function initWebhooks() {
  onSubmit($('#webhook-form'), async (values, form) => {
    const body = { url: values.url.trim(), events: words(values.events) };
    if (values.description.trim()) body.description = values.description.trim();
    let created;
    try {
      created = await call('/api/v1/webhooks', { method: 'POST', body });
    } catch (err) {
      throw worded(err);
    }
    form.reset();
    carriedSecret = created.secret;
    notify(t('js.admin-webhooks.added', { url: created.url }), { beforeNavigation: true });
    location.hash = hookHref(created.id);
  });
  onSubmit($('#webhook-edit'), async (values) => {
    const body = {
      url: values.url.trim(),
      events: words(values.events),
      description: values.description.trim(),
    };
    try {
      fill(await call(path(), { method: 'PUT', body }));
    } catch (err) {
      throw worded(err);
    }
    notify(t('js.admin-webhooks.saved'));
  });
  $('#webhook-toggle').addEventListener('click', toggle);
  $('#webhook-test').addEventListener('click', sendTest);
  $('#webhook-rotate').addEventListener('click', rotate);
  $('#webhook-delete').addEventListener('click', remove);
  $('#deliveries-refresh').addEventListener('click', () => loadDeliveries());
  $('#deliveries-more').addEventListener('click', () => loadDeliveries({ more: true }));
}
