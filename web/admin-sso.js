// A SAML connection's page in the providers view (docs/sso.md, "The console"): the values an IdP
// asks for (SP entity id, ACS URL, SP metadata URL) read from the SP metadata Gatehouse serves, so
// they are exactly what the assertion consumer checks; a test sign-in in a new tab; and for the
// connection's organization the SCIM base URL and a new SCIM token (shown once, docs/api.md §23).
import { call, confirmAction, explain, fail, hideSecret, showSecret } from './admin-core.js';
import { $, announce, base, el, focusOn, t } from './lib.js';

const panel = $('#sso-connection');
let shown = null;

/** The SP values of a connection, from its metadata document (entityID, the HTTP-POST ACS). */
async function spValues(name) {
  const res = await fetch(`${base}/saml/${encodeURIComponent(name)}/metadata`, { credentials: 'omit' });
  if (!res.ok) throw new Error(`metadata: HTTP ${res.status}`);
  const doc = new DOMParser().parseFromString(await res.text(), 'application/xml');
  const md = 'urn:oasis:names:tc:SAML:2.0:metadata';
  const entityId = doc.getElementsByTagNameNS(md, 'EntityDescriptor')[0]?.getAttribute('entityID') ?? '';
  const acs = doc.getElementsByTagNameNS(md, 'AssertionConsumerService')[0]?.getAttribute('Location') ?? '';
  // The entity id is <PUBLIC_URL>/saml/<name>: its metadata sits below it, SCIM beside it.
  const publicUrl = entityId.replace(/\/saml\/[^/]+$/, '');
  return {
    entity_id: entityId,
    acs_url: acs,
    metadata_url: `${entityId}/metadata`,
    scim_url: `${publicUrl}/scim/v2`,
  };
}

/** A row button opening the page of a SAML connection (added to its row by admin-providers.js). */
export function connectionButton(p) {
  const button = el('button', t('js.admin-sso.open'), {
    type: 'button',
    class: 'secondary small',
    'aria-label': t('js.admin-sso.open_label', { name: p.display_name }),
  });
  button.addEventListener('click', () => showConnection(p));
  return button;
}

/** Shows a SAML connection's page. */
export async function showConnection(p) {
  shown = p;
  hideSecret($('#sso-scim-secret'));
  $('#sso-error').textContent = '';
  $('#sso-copied').textContent = '';
  $('#sso-title').textContent = t('js.admin-sso.title', { name: p.display_name });
  const test = $('#sso-test');
  test.href = `${base}/api/v1/idp/${encodeURIComponent(p.name)}/start?return_to=${encodeURIComponent(`${base}/account`)}`;
  $('#sso-scim').hidden = !p.organization_id;
  panel.hidden = false;
  focusOn($('#sso-title'));
  try {
    const values = await spValues(p.name);
    for (const node of panel.querySelectorAll('[data-sso]')) {
      const value = values[node.dataset.sso] ?? '';
      node.textContent = value;
      if (node.tagName === 'A') node.href = value;
    }
  } catch (err) {
    fail($('#sso-error'), err);
  }
}

/** Hides the page (leaving the view, another provider, or its own close button). */
export function hideConnection() {
  shown = null;
  hideSecret($('#sso-scim-secret'));
  panel.hidden = true;
}

async function copy(key) {
  const node = $(`[data-sso="${key}"]`, panel);
  const region = $('#sso-copied');
  try {
    await navigator.clipboard.writeText(node.textContent);
    announce(region, t('js.admin-sso.copied'));
  } catch {
    // No clipboard (an insecure origin, a refused permission): select it for a manual copy.
    getSelection()?.selectAllChildren(node);
    announce(region, t('js.admin-sso.copy_by_hand'));
  }
}

async function newScimToken() {
  const p = shown;
  if (!p?.organization_id) return;
  const sure = await confirmAction({
    title: t('js.admin-sso.token_confirm_title'),
    text: t('js.admin-sso.token_confirm_text'),
    yes: t('js.admin-sso.token_confirm_yes'),
  });
  if (!sure || shown !== p) return;
  try {
    const answer = await call(`/api/v1/organizations/${encodeURIComponent(p.organization_id)}/scim-token`, {
      method: 'POST',
    });
    showSecret($('#sso-scim-secret'), answer.token);
  } catch (err) {
    fail($('#sso-error'), explain(err));
  }
}

/** Wires the page once; it lives in the providers view (its fragment is included beside it). */
export function initConnection() {
  $('#view-providers').append(panel);
  for (const button of panel.querySelectorAll('[data-copy-sso]')) {
    button.addEventListener('click', () => copy(button.dataset.copySso));
  }
  $('#sso-close').addEventListener('click', () => {
    hideConnection();
    focusOn($('#providers-title'));
  });
  $('#sso-scim-token').addEventListener('click', newScimToken);
}
