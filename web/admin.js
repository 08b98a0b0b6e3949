// /admin: the admin console (docs/console.md). Signs in through the hosted sign-in page (second
// factors included), then drives the JSON API as that admin. A non-admin sees "No access" and the
// console asks the API for nothing.

import { can, clearNotice, fail, isolate, loadModules } from './admin-core.js';
import { initKeys, showKeys } from './admin-keys.js';
import { initAudit, initNew, showAudit, showModules, showNew } from './admin-more.js';
import { initOAuth, showOAuth } from './admin-oauth.js';
import { initOrganization, showOrganization } from './admin-org.js';
import { initOrganizations, showOrganizations } from './admin-orgs.js';
import { initProviders, showProviders } from './admin-providers.js';
import { initRoles, showRoles } from './admin-roles.js';
import { initUser, showUser } from './admin-user.js';
import { initUsers, showUsers } from './admin-users.js';
import { initWebhooks, showWebhook, showWebhooks } from './admin-webhooks.js';
import { $, base, focusOn, Problem, restore, signOut, t } from './lib.js';

const VIEWS = [
  'users',
  'user',
  'new',
  'modules',
  'audit',
  'oauth',
  'providers',
  'webhooks',
  'webhook',
  'orgs',
  'org',
  'roles',
  'keys',
];
/** A page's own view and the navigation entry it belongs to. */
const SECTION = { user: 'users', webhook: 'webhooks', orgs: 'organizations', org: 'organizations' };

function showView(name) {
  for (const view of VIEWS) $(`#view-${view}`).hidden = view !== name;
  const section = SECTION[name] ?? name;
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (link.dataset.nav === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/** Shows the navigation entries whose endpoints answer now. */
function applyModules() {
  $('#nav-new').hidden = !(can('POST /api/v1/users') || can('POST /api/v1/users/invite'));
  $('#nav-audit').hidden = !can('GET /api/v1/admin/audit');
  // The pages of optional modules show while their module is on (docs/console.md).
  $('#nav-oauth').hidden = !can('GET /api/v1/clients');
  $('#nav-providers').hidden = !can('GET /api/v1/idp/providers');
  $('#nav-webhooks').hidden = !can('GET /api/v1/webhooks');
  $('#nav-organizations').hidden = !can('GET /api/v1/organizations');
  $('#nav-roles').hidden = !can('GET /api/v1/roles');
  $('#nav-keys').hidden = !can('GET /api/v1/api-keys');
}

/**
 * `#/users`, `#/users/<id>`, `#/new`, `#/modules`, `#/audit?target=<id>`, `#/oauth`, `#/oauth/<client_id>`, `#/providers`,
 * `#/webhooks`, `#/webhooks/<id>`, `#/organizations`, `#/organizations/<id>`, `#/roles`,
 * `#/keys?owner=user:<id>|organization:<id>`.
 */
async function route() {
  clearNotice();
  const [path, search] = location.hash.replace(/^#/, '').split('?');
  const parts = (path || '/users').split('/').filter(Boolean);
  const query = new URLSearchParams(search ?? '');
  if (parts[0] === 'users' && parts[1]) {
    showView('user');
    return showUser(decodeURIComponent(parts[1]));
  }
  if (parts[0] === 'new' && !$('#nav-new').hidden) {
    showView('new');
    showNew();
    return focusOn($('#new-title'));
  }
  if (parts[0] === 'modules') {
    showView('modules');
    focusOn($('#modules-title'));
    return showModules();
  }
  if (parts[0] === 'audit' && !$('#nav-audit').hidden) {
    showView('audit');
    focusOn($('#audit-title'));
    return showAudit(query);
  }
  if (parts[0] === 'oauth' && !$('#nav-oauth').hidden) {
    showView('oauth');
    focusOn($('#oauth-title'));
    return showOAuth(parts[1] === undefined ? undefined : decodeURIComponent(parts[1]));
  }
  if (parts[0] === 'providers' && !$('#nav-providers').hidden) {
    showView('providers');
    focusOn($('#providers-title'));
    return showProviders();
  }
  if (parts[0] === 'webhooks' && !$('#nav-webhooks').hidden) {
    if (parts[1]) {
      showView('webhook');
      return showWebhook(decodeURIComponent(parts[1]));
    }
    showView('webhooks');
    focusOn($('#webhooks-title'));
    return showWebhooks();
  }
  if (parts[0] === 'organizations' && !$('#nav-organizations').hidden) {
    if (parts[1]) {
      showView('org');
      return showOrganization(decodeURIComponent(parts[1]));
    }
    showView('orgs');
    focusOn($('#orgs-title'));
    return showOrganizations();
  }
  if (parts[0] === 'roles' && !$('#nav-roles').hidden) {
    showView('roles');
    focusOn($('#roles-title'));
    return showRoles();
  }
  if (parts[0] === 'keys' && !$('#nav-keys').hidden) {
    showView('keys');
    focusOn($('#keys-title'));
    return showKeys(query);
  }
  showView('users');
  await showUsers();
}

function noAccess() {
  $('#loading').hidden = true;
  $('#no-access').hidden = false;
  focusOn($('#no-access-title'));
}

async function start() {
  let me;
  try {
    me = await restore();
  } catch (err) {
    $('#loading').hidden = true;
    fail($('#fatal'), err);
    return;
  }
  if (!me) {
    location.replace(`${base}/account/sign-in?next=/admin`);
    return;
  }
  if (me.role !== 'admin') return noAccess();
  try {
    await loadModules();
  } catch (err) {
    // A role changed since the session began: the API is the judge.
    if (err instanceof Problem && err.status === 403) return noAccess();
    $('#loading').hidden = true;
    fail($('#fatal'), err);
    return;
  }
  $('#me').textContent = t('js.admin.signed_in_as', { email: isolate(me.email) });
  initUsers();
  initUser();
  initNew();
  initAudit();
  initOAuth();
  initProviders();
  initWebhooks();
  initOrganizations();
  initOrganization();
  initRoles();
  initKeys();
  applyModules();
  document.addEventListener('modules-changed', applyModules);
  $('#sign-out').addEventListener('click', async () => {
    try {
      await signOut();
    } finally {
      location.assign(`${base}/account/sign-in?next=/admin`);
    }
  });
  window.addEventListener('hashchange', route);
  $('#loading').hidden = true;
  $('#app').hidden = false;
  await route();
}

start();
