// /account/authorize/<uid>: the hosted half of "Sign in with Gatehouse" (docs/oauth.md). Signs in
// through /account/sign-in (password, second factor, passkey) when there is no session, continues
// the application's request as the signed-in account, and asks for consent when the server says so.
import { $, api, base, el, focusOn, lang, restore, showError, signOut, t } from './lib.js';

const uid = location.pathname.split('/').filter(Boolean).pop();
const call = (step, body) =>
  api(`/account/authorize/${encodeURIComponent(uid)}/${step}`, { method: 'POST', auth: true, body });

function signInFirst() {
  const next = `/account/authorize/${uid}`;
  // This page's language is the request's `ui_locales` (API §24): the sign-in and second-factor
  // steps of the interaction keep it through `?lang=`.
  location.assign(
    `${base}/account/sign-in?next=${encodeURIComponent(next)}&lang=${encodeURIComponent(lang)}`,
  );
}

function fail(err) {
  $('#loading').hidden = true;
  showError($('.card'), err);
  focusOn($('#authorize-error'));
}

async function showConsent(view) {
  $('#client-name').textContent = view.client.name;
  $('#client-name-2').textContent = view.client.name;
  const list = $('#scope-list');
  for (const scope of view.scopes) list.append(el('li', scope.description));
  const apis = $('#api-list');
  for (const apiView of view.apis) {
    apis.append(el('h3', t('js.authorize.use_api', { api: apiView.name })));
    const ul = el('ul', '');
    for (const scope of apiView.scopes) ul.append(el('li', scope.description));
    apis.append(ul);
  }
  $('#loading').hidden = true;
  $('#consent').hidden = false;
  focusOn($('#consent-title'));
  const decide = async (allow) => {
    try {
      const { redirect_to } = await call('consent', { allow });
      location.assign(redirect_to);
    } catch (err) {
      fail(err);
    }
  };
  $('#allow-button').addEventListener('click', () => decide(true));
  $('#deny-button').addEventListener('click', () => decide(false));
}

// The account is not a member of the organization the application asked for (docs/api.md §21):
// say so, and go back to the application, which gets `access_denied`.
function showRefusedOrganization(view) {
  $('#org-client-name').textContent = view.client.name;
  const back = $('#back-button');
  back.textContent = t('js.authorize.back_to', { client: view.client.name });
  $('#loading').hidden = true;
  $('#refused-organization').hidden = false;
  focusOn($('#refused-title'));
  back.addEventListener('click', async () => {
    try {
      const { redirect_to } = await call('back');
      location.assign(redirect_to);
    } catch (err) {
      fail(err);
    }
  });
}

async function start() {
  let view;
  try {
    view = await api(`/account/authorize/${encodeURIComponent(uid)}/details`);
  } catch (err) {
    fail(err);
    return;
  }
  const user = await restore().catch(() => null);
  if (!user) {
    signInFirst();
    return;
  }
  if (view.prompt === 'organization') {
    showRefusedOrganization(view);
    return;
  }
  if (view.prompt === 'consent' && view.client.first_party) {
    // A first-party application never shows a consent page (docs/api.md §17), even with
    // prompt=consent: the server records what it asked for and the request goes on.
    try {
      const { redirect_to } = await call('consent', { allow: true });
      location.assign(redirect_to);
    } catch (err) {
      fail(err);
    }
    return;
  }
  if (view.prompt === 'consent') {
    await showConsent(view);
    return;
  }
  try {
    const { redirect_to } = await call('login');
    location.assign(redirect_to);
  } catch (err) {
    // The application asked for a fresh sign-in (prompt=login, max_age): sign out, then in again.
    // A `require_mfa` organization with no second factor on the account: set one up first.
    if (err?.code === 'mfa_enrollment_required') {
      $('#loading').hidden = true;
      $('#enroll-link').hidden = false;
      return;
    }
    if (err?.code === 'reauthentication_required') {
      await signOut().catch(() => {});
      signInFirst();
      return;
    }
    fail(err);
  }
}

start();
