// What every part of the admin console shares: the module list (which controls exist), the
// console's wording of refusals, the notice region and the confirmation dialog. See docs/console.md.
import { $, announce, api, describe, el, has, lang, Problem, t } from './lib.js';

/** Rows per table page: every list, search and audit call asks for exactly this many. */
export const PAGE_SIZE = 25;

const state = { modules: [] };

/** Loads `GET /api/v1/admin/modules`; the console shows only controls whose endpoint answers. */
export async function loadModules() {
  state.modules = (await api('/api/v1/admin/modules', { auth: true })).data;
  return state.modules;
}

export function moduleList() {
  return state.modules;
}

/** Replaces one module after a toggle. */
export function updateModule(module) {
  state.modules = state.modules.map((m) => (m.name === module.name ? module : m));
}

/**
 * Whether an endpoint (written as the module list writes it, e.g. `DELETE /api/v1/users/<id>/mfa`)
 * is served now: its module is on and declares it. An endpoint of a module not built into this
 * release is in no module's list, so its control stays hidden instead of failing.
 */
export function can(endpoint) {
  return state.modules.some((m) => m.enabled && m.endpoints.includes(endpoint));
}

/** Whether a module's code is part of this release (it declares endpoints), on or off. */
export function built(name) {
  return state.modules.some((m) => m.name === name && m.endpoints.length > 0);
}

/**
 * A sentence for the admin: the console's own (`js.admin.error.<code>`), else the pages' shared one
 * (`js.error.<code>`), else the API's detail. A problem body stays English (API §24), so its detail
 * is shown only where it explains more than the sentence: a refusal's reason in the English console,
 * and in every language which setting or how many accounts stand in the way.
 */
export function explain(err) {
  if (err instanceof Problem) {
    if (err.code === 'forbidden' && lang === 'en' && err.message && err.message !== 'Forbidden')
      return `${err.message}.`;
    if (['module_unavailable', 'module_in_use', 'resource_in_use'].includes(err.code) && err.message)
      return err.message;
    if (has(`js.admin.error.${err.code}`)) return t(`js.admin.error.${err.code}`);
  }
  return describe(err);
}

/**
 * An address, id or name set inside a sentence of a right-to-left page: isolated (U+2068 … U+2069)
 * so its left-to-right run cannot reorder the words around it. Left-to-right pages get it as is.
 */
export function isolate(text) {
  return document.documentElement.dir === 'rtl' ? `\u2068${text}\u2069` : String(text);
}

/** Shows a refusal in an alert region (read out at once). */
export function fail(region, err) {
  region.textContent = typeof err === 'string' ? err : explain(err);
}

let carried = false;

/**
 * A success message in the console's status region (read out politely). `beforeNavigation`: the
 * message stays through the view change that follows (a deleted user's page gives way to the list).
 */
export function notify(message, { beforeNavigation = false } = {}) {
  carried = beforeNavigation;
  announce($('#notice'), message);
}

/** Clears the message when the view changes (unless it announces that very change). */
export function clearNotice() {
  if (carried) carried = false;
  else $('#notice').textContent = '';
}

/**
 * Asks before an action that cannot be undone, in a modal dialog (focus starts on Cancel and
 * returns to the control that opened it). Resolves true when confirmed.
 */
export function confirmAction({ title, text, yes }) {
  const dialog = $('#confirm');
  const opener = document.activeElement;
  $('#confirm-title').textContent = title;
  $('#confirm-text').textContent = text;
  $('#confirm-yes').textContent = yes;
  return new Promise((resolve) => {
    const finish = (answer) => {
      $('#confirm-yes').removeEventListener('click', onYes);
      $('#confirm-no').removeEventListener('click', onNo);
      dialog.removeEventListener('cancel', onNo);
      dialog.close();
      if (opener instanceof HTMLElement) opener.focus();
      resolve(answer);
    };
    const onYes = () => finish(true);
    const onNo = (event) => {
      event?.preventDefault();
      finish(false);
    };
    $('#confirm-yes').addEventListener('click', onYes);
    $('#confirm-no').addEventListener('click', onNo);
    dialog.addEventListener('cancel', onNo);
    dialog.showModal();
    $('#confirm-no').focus();
  });
}

/**
 * A table cell holding text, or a link to a user's page. `ltr`: an address, id or code, which reads
 * left to right in a right-to-left page too; set on the text, so the cell still aligns with its column.
 */
export function cell(text, href, { ltr = false } = {}) {
  const td = el('td');
  const attrs = ltr ? { dir: 'ltr' } : {};
  if (href) td.append(el('a', text, { href, ...attrs }));
  else if (ltr) td.append(el('span', text, attrs));
  else td.textContent = text;
  return td;
}

/** Calls the API as the signed-in admin. */
export function call(path, options = {}) {
  return api(path, { ...options, auth: true });
}

export const userHref = (id) => `#/users/${encodeURIComponent(id)}`;

/** Days (from a date input) as the API's instants: the start of the day, or its last millisecond. */
export function dayStart(value) {
  return value ? `${value}T00:00:00.000Z` : '';
}

export function dayEnd(value) {
  return value ? `${value}T23:59:59.999Z` : '';
}

/** The non-empty lines of a textarea, trimmed. */
export function lines(text) {
  return String(text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** The words of a space-separated field. */
export function words(text) {
  return String(text ?? '')
    .split(/\s+/)
    .filter(Boolean);
}

/** Fills a table body with rows, or one full-width cell saying the list is empty. */
export function fillTable(body, rows, emptyText, columns) {
  body.replaceChildren(...rows);
  if (rows.length > 0) return;
  const td = el('td', emptyText);
  td.colSpan = columns;
  const tr = el('tr');
  tr.append(td);
  body.append(tr);
}

/** A small button in a table row, named for a screen reader by what it acts on. */
export function rowButton(text, label, onClick, className = 'secondary small') {
  const button = el('button', text, { type: 'button', class: className, 'aria-label': label });
  button.addEventListener('click', onClick);
  const td = el('td');
  td.append(button);
  return td;
}

/**
 * Shows a secret the API gives this once (a client secret, a webhook signing secret) in its panel,
 * with a copy button. The page keeps it nowhere else: "I have stored it", leaving the view or the
 * next secret clears it, and nothing can show it again (docs/console.md).
 */
export function showSecret(panel, secret) {
  const code = $('[data-secret]', panel);
  const copied = $('[data-copied]', panel);
  code.textContent = secret;
  copied.textContent = '';
  panel.hidden = false;
  const copy = $('[data-copy]', panel);
  copy.onclick = async () => {
    try {
      await navigator.clipboard.writeText(code.textContent);
      announce(copied, t('js.admin.copied'));
    } catch {
      // No clipboard (an insecure origin, a refused permission): select it for a manual copy.
      getSelection()?.selectAllChildren(code);
      announce(copied, t('js.admin.copy_by_hand'));
    }
  };
  $('[data-done]', panel).onclick = () => hideSecret(panel);
  const heading = $('h2', panel);
  if (heading) heading.focus();
}

/** Forgets a shown secret (its text leaves the page). */
export function hideSecret(panel) {
  $('[data-secret]', panel).textContent = '';
  $('[data-copied]', panel).textContent = '';
  panel.hidden = true;
}
