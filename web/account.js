// /account: profile, password, e-mail, second factors, passkeys, sessions, sign-out. Each section
// shows only while its module is on; every action is one call of the JSON API.

import { loadApps } from './account-apps.js';
import { loadIdentities } from './account-identities.js';
import { loadKeys } from './account-keys.js';
import { loadOrganizations } from './account-organizations.js';
import { loadSessions } from './account-sessions.js';
import {
  $,
  acceptTokens,
  announce,
  api,
  base,
  createCredential,
  currentUser,
  el,
  focusOn,
  formatDate,
  has,
  modules,
  onSubmit,
  passkeysSupported,
  restore,
  showError,
  signOut,
  t,
} from './lib.js';
import { offerProofs, withProof } from './proof.js';

const notice = $('#notice');
const say = (message) => announce(notice, message);
const auth = { auth: true };

function toSignIn() {
  location.replace(`${base}/account/sign-in?next=/account`);
}

function renderProfile(user) {
  $('#profile-name').textContent = user.name || '—';
  $('#profile-email').textContent = user.email;
  $('#profile-verified').textContent = t(
    user.email_verified ? 'js.account.confirmed' : 'js.account.not_confirmed',
  );
  // The two built-in roles by their name in the page's language; any other as it is written.
  const role = `js.account.role_${user.role}`;
  $('#profile-role').textContent = has(role) ? t(role) : user.role;
  $('#profile-created').textContent = formatDate(user.created_at);
  $('#password-username').value = user.email;
  $('#verify-box').hidden = user.email_verified;
}

// --- profile, password, e-mail ------------------------------------------------------------------

onSubmit($('#name-form'), async ({ name }) => {
  const user = await api(`/api/v1/users/${currentUser().id}`, { ...auth, method: 'PUT', body: { name } });
  renderProfile(user);
  say(t('js.account.name_saved'));
});

onSubmit($('#password-form'), async (values, form) => {
  // A fresh session replaces this one (cookie mode: the new refresh token arrives as a cookie).
  const tokens = await api('/api/v1/change-password', {
    ...auth,
    method: 'PUT',
    cookie: true,
    body: { current_password: values.current_password, new_password: values.new_password },
  });
  acceptTokens(tokens);
  form.reset();
  say(t('js.account.password_changed'));
  loadSessions(say);
});

onSubmit($('#verify-form'), async () => {
  await api('/api/v1/email/verification', { ...auth, method: 'POST' });
  say(t('js.account.verification_sent'));
});

// Each change below sends a fresh proof (docs/api.md §16): web/proof.js asks for it.
withProof($('#email-form'), async (proof, values) => {
  await api('/api/v1/email/change', {
    ...auth,
    method: 'POST',
    body: { new_email: values.new_email.trim(), ...proof },
  });
  say(t('js.account.change_sent'));
});

// --- second factors -----------------------------------------------------------------------------

let qrUrl = null;

function showCodes(codes) {
  const list = $('#codes-list');
  list.replaceChildren(...codes.map((code) => el('li', code)));
  $('#codes-shown').hidden = false;
  focusOn($('#codes-shown-title'));
}

$('#codes-done').addEventListener('click', () => {
  $('#codes-list').replaceChildren();
  $('#codes-shown').hidden = true;
  focusOn($('#mfa-title'));
});

// What the account can prove itself with besides its password (web/proof.js).
const proofs = { code: false, passkey: false };

async function loadMfa() {
  if (!modules.has('mfa')) return;
  const status = await api('/api/v1/mfa', auth);
  const on = status.totp.enabled;
  proofs.code = on || status.recovery_codes_remaining > 0;
  proofs.passkey = modules.has('passkeys') && status.passkeys > 0;
  offerProofs(proofs);
  $('#mfa-status').textContent = on
    ? t('js.account.totp_on_since', { date: formatDate(status.totp.created_at) })
    : t('js.account.totp_none');
  $('#totp-off').hidden = on || !$('#totp-enroll').hidden;
  $('#totp-on').hidden = !on;
  $('#codes-box').hidden = status.recovery_codes_remaining === 0 && !on;
  $('#codes-remaining').textContent = t('js.account.codes_left', { count: status.recovery_codes_remaining });
}

onSubmit($('#totp-start-form'), async (values, form) => {
  const enrolment = await api('/api/v1/mfa/totp', {
    ...auth,
    method: 'POST',
    body: { current_password: values.current_password },
  });
  form.reset();
  if (qrUrl) URL.revokeObjectURL(qrUrl);
  // The SVG is shown as an image (an object URL): it cannot run script or touch the page.
  qrUrl = URL.createObjectURL(new Blob([enrolment.qr_svg], { type: 'image/svg+xml' }));
  $('#totp-qr').src = qrUrl;
  $('#totp-secret').textContent = enrolment.secret;
  $('#totp-off').hidden = true;
  $('#totp-enroll').hidden = false;
  focusOn($('#totp-enroll-title'));
});

onSubmit($('#totp-confirm-form'), async (values, form) => {
  const { recovery_codes } = await api('/api/v1/mfa/totp/confirm', {
    ...auth,
    method: 'POST',
    body: { code: values.code.trim() },
  });
  form.reset();
  $('#totp-enroll').hidden = true;
  $('#totp-secret').textContent = '';
  say(t('js.account.totp_on'));
  await loadMfa();
  if (Array.isArray(recovery_codes)) showCodes(recovery_codes);
  loadSessions(say);
});

withProof($('#totp-off-form'), async (proof) => {
  await api('/api/v1/mfa/totp', { ...auth, method: 'DELETE', body: proof });
  say(t('js.account.totp_off'));
  await loadMfa();
});

withProof($('#codes-form'), async (proof) => {
  const { recovery_codes } = await api('/api/v1/mfa/recovery-codes', {
    ...auth,
    method: 'POST',
    body: proof,
  });
  await loadMfa();
  showCodes(recovery_codes);
});

// --- passkeys -----------------------------------------------------------------------------------

// The passkey a "Remove" button picked; removed once the proof form is sent.
let removing = null;

function closeRemoval() {
  removing = null;
  $('#passkey-remove').hidden = true;
  $('#passkey-remove-form').reset();
}

$('#passkey-remove-cancel').addEventListener('click', () => {
  closeRemoval();
  focusOn($('#passkeys-title'));
});

withProof($('#passkey-remove-form'), async (proof) => {
  const { id, name } = removing;
  await api(`/api/v1/passkeys/${encodeURIComponent(id)}`, { ...auth, method: 'DELETE', body: proof });
  closeRemoval();
  say(t('js.account.passkey_removed', { name }));
  await Promise.all([loadPasskeys(), loadMfa()]);
  focusOn($('#passkeys-title'));
});

async function loadPasskeys() {
  if (!modules.has('passkeys')) return;
  const { data } = await api('/api/v1/passkeys', auth);
  proofs.passkey = data.length > 0;
  offerProofs(proofs);
  const list = $('#passkeys-list');
  if (data.length === 0) {
    list.replaceChildren(el('li', t('js.account.no_passkeys')));
    return;
  }
  list.replaceChildren(
    ...data.map((passkey) => {
      const name = passkey.name || t('js.account.passkey_unnamed');
      const text = el('span', null, { class: 'item-text' });
      text.append(
        el('strong', name),
        el('br'),
        el(
          'span',
          t('js.account.passkey_dates', {
            added: formatDate(passkey.created_at),
            used: formatDate(passkey.last_used_at),
          }),
          { class: 'muted' },
        ),
      );
      const remove = el('button', t('js.account.remove'), {
        type: 'button',
        class: 'danger',
        'aria-label': t('js.account.remove_named', { name }),
      });
      // Removing needs a fresh proof: the confirmation form asks for it.
      remove.addEventListener('click', () => {
        removing = { id: passkey.id, name };
        $('#passkey-remove-title').textContent = t('js.account.remove_named', { name });
        $('#passkey-remove').hidden = false;
        focusOn($('#passkey-remove-title'));
      });
      const item = el('li');
      item.append(text, remove);
      return item;
    }),
  );
}

onSubmit($('#passkey-form'), async (values, form) => {
  const { challenge_id, options } = await api('/api/v1/passkeys/registration/options', {
    ...auth,
    method: 'POST',
    body: { current_password: values.current_password },
  });
  const response = await createCredential(options);
  const name = values.name.trim();
  const created = await api('/api/v1/passkeys', {
    ...auth,
    method: 'POST',
    body: { challenge_id, response, ...(name ? { name } : {}) },
  });
  form.reset();
  say(
    created.name
      ? t('js.account.passkey_added', { name: created.name })
      : t('js.account.passkey_added_unnamed'),
  );
  await Promise.all([loadPasskeys(), loadMfa()]);
  if (Array.isArray(created.recovery_codes)) showCodes(created.recovery_codes);
});

// --- sign-out -----------------------------------------------------------------------------------

for (const [id, everywhere] of [
  ['#sign-out', false],
  ['#sign-out-everywhere', true],
]) {
  $(id).addEventListener('click', async () => {
    try {
      await signOut(everywhere);
    } catch {
      // The cookie is cleared whatever the answer; the session ends on the server or already has.
    }
    location.replace(`${base}/account/sign-in`);
  });
}

// --- start --------------------------------------------------------------------------------------

async function start() {
  let user;
  try {
    user = await restore();
  } catch (err) {
    $('#loading').textContent = err.message;
    return;
  }
  if (!user) return toSignIn();
  document.body.classList.add('account');
  renderProfile(user);
  $('#name').value = user.name ?? '';
  $('#password-section').hidden = !modules.has('account');
  $('#email-section').hidden = !modules.has('email');
  $('#mfa-section').hidden = !modules.has('mfa');
  $('#passkeys-section').hidden = !(modules.has('passkeys') && passkeysSupported);
  $('#sessions-section').hidden = !modules.has('sessions');
  $('#identities-section').hidden = !modules.has('providers');
  $('#apps-section').hidden = !modules.has('oauth');
  $('#organizations-section').hidden = !modules.has('organizations');
  $('#keys-section').hidden = !modules.has('api_keys');
  $('#loading').hidden = true;
  $('#account').hidden = false;
  const loads = [
    [loadMfa, '#mfa-section'],
    [loadPasskeys, '#passkeys-section'],
    [() => loadSessions(say), '#sessions-section'],
    [() => (modules.has('providers') ? loadIdentities(say) : Promise.resolve()), '#identities-section'],
    [() => loadApps(say), '#apps-section'],
    [() => loadOrganizations(say), '#organizations-section'],
    [() => loadKeys(say), '#keys-section'],
  ];
  await Promise.all(loads.map(([load, section]) => load().catch((err) => showError($(section), err))));
}

start();
