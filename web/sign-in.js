// /account/sign-in: password, then a second factor when the API asks (403 mfa_required), or its
// enrolment when REQUIRE_MFA asks for one first (403 mfa_enrollment_required, sign-in-enrol.js);
// passkey-only sign-in by a button and by autofill (conditional mediation) on the e-mail field.
// An unconfirmed address (403 email_not_verified, REQUIRE_VERIFIED_EMAIL) can ask for a new
// confirmation mail with the e-mail and password just typed (docs/email.md). A password the service
// generated (403 password_change_required) asks for a new one and signs in with both (docs/auth.md).
// Sign-in by an e-mailed
// link or code lives in sign-in-email.js (shown only while the passwordless module is on).
import {
  $,
  acceptTokens,
  announce,
  api,
  getAssertion,
  modules,
  nextUrl,
  onSubmit,
  Problem,
  passkeysSupported,
  restore,
  showError,
  showOnly,
  t,
} from './lib.js';
import { addressPending, continueWithAddress, setUpAddressFirst } from './sign-in-discover.js';
import { onLinkPage, setUpEmailSignIn } from './sign-in-email.js';
import { startEnrolment } from './sign-in-enrol.js';
import { pendingSecondFactor, providerError, showProviders } from './sign-in-providers.js';

const passwordStep = $('#password-step');
const changeStep = $('#change-step');
const mfaStep = $('#mfa-step');
const mfaForm = $('#mfa-form');
const codeInput = $('#code');
const passkeysOn = modules.has('passkeys') && passkeysSupported;
let mfa = null;
let useRecoveryCode = false;
let conditional = null;
// The e-mail and password of a sign-in refused as unconfirmed, kept in memory for the resend only.
let unconfirmed = null;
// The e-mail and generated password of a sign-in that must set a new password, in memory only.
let generated = null;
// Where a provider sign-in that stopped for its second factor goes on to (its checked return_to).
let continueTo = null;

function signedIn(tokens) {
  acceptTokens(tokens);
  location.assign(continueTo ?? nextUrl());
}

const options = (body) => api('/api/v1/passkeys/authentication/options', { method: 'POST', body });

function setCodeMode(recovery) {
  useRecoveryCode = recovery;
  $('#code-label').textContent = recovery
    ? t('js.sign_in.code_label_recovery')
    : t('js.sign_in.code_label_totp');
  $('#code-hint').textContent = recovery
    ? t('js.sign_in.code_hint_recovery')
    : t('js.sign_in.code_hint_totp');
  codeInput.setAttribute('inputmode', recovery ? 'text' : 'numeric');
  codeInput.setAttribute('autocomplete', recovery ? 'off' : 'one-time-code');
  $('#switch-code').textContent = recovery
    ? t('js.sign_in.switch_to_totp')
    : t('js.sign_in.switch_to_recovery');
  codeInput.value = '';
}

function startMfa(problem) {
  conditional?.abort();
  for (const step of document.querySelectorAll('#email-step, #link-step')) step.hidden = true;
  const methods = Array.isArray(problem.methods) ? problem.methods : [];
  mfa = { token: problem.mfa_token, methods };
  const totp = methods.includes('totp');
  const codes = methods.includes('recovery_code');
  setCodeMode(!totp);
  mfaForm.hidden = !(totp || codes);
  $('#switch-code').hidden = !(totp && codes);
  $('#mfa-passkey').hidden = !(methods.includes('passkey') && passkeysOn);
  showOnly(mfaStep, passwordStep, changeStep);
  if (!mfaForm.hidden) codeInput.focus();
  else $('#mfa-passkey-button').focus();
}

function askToConfirm({ email, password }) {
  unconfirmed = { email, password };
  $('#resent').textContent = '';
  $('#resend-error').textContent = '';
  $('#unverified').hidden = false;
  $('#unverified-title').focus();
}

onSubmit($('#password-form'), async (values) => {
  // Address first (docs/sso.md): an SSO domain goes to its provider, any other on to the password.
  if (addressPending()) return continueWithAddress(values.email);
  $('#unverified').hidden = true;
  unconfirmed = null;
  try {
    signedIn(
      await api('/api/v1/login', {
        method: 'POST',
        cookie: true,
        body: { email: values.email, password: values.password },
      }),
    );
  } catch (err) {
    if (err instanceof Problem && err.code === 'mfa_required') startMfa(err.body);
    // REQUIRE_MFA: a second factor must be added first (docs/mfa.md); enrolment happens here.
    else if (err instanceof Problem && err.code === 'mfa_enrollment_required' && err.body?.enrollment_token)
      await startEnrolment(err.body, values.password, passwordStep);
    else if (err instanceof Problem && err.code === 'password_change_required') {
      generated = { email: values.email, password: values.password };
      showOnly(changeStep, passwordStep);
      $('#new-password').focus();
    }
    // The offer needs the email module, which owns POST /email/verification (404 without it).
    else if (err instanceof Problem && err.code === 'email_not_verified' && modules.has('email'))
      askToConfirm(values);
    else throw err;
  }
});

onSubmit($('#change-form'), async (values) => {
  if (generated === null) return;
  try {
    signedIn(
      await api('/api/v1/login', {
        method: 'POST',
        cookie: true,
        body: { ...generated, new_password: values.new_password },
      }),
    );
  } catch (err) {
    if (!(err instanceof Problem && err.code === 'mfa_required')) throw err;
    generated = null;
    startMfa(err.body);
  }
});

$('#resend-button').addEventListener('click', async () => {
  const button = $('#resend-button');
  if (unconfirmed === null) return;
  button.disabled = true;
  $('#resend-error').textContent = '';
  try {
    const answer = await api('/api/v1/email/verification', { method: 'POST', body: unconfirmed });
    announce($('#resent'), `${answer.message} Follow it, then sign in.`);
  } catch (err) {
    showError($('#unverified'), err);
  } finally {
    button.disabled = false;
  }
});

$('#switch-code').addEventListener('click', () => {
  setCodeMode(!useRecoveryCode);
  codeInput.focus();
});

onSubmit(mfaForm, async (values) => {
  signedIn(
    await api('/api/v1/login/mfa', {
      method: 'POST',
      cookie: true,
      body: { mfa_token: mfa.token, code: values.code.trim() },
    }),
  );
});

$('#mfa-passkey-button').addEventListener('click', async () => {
  const region = $('#mfa-passkey-error');
  region.textContent = '';
  try {
    const { challenge_id, options: publicKey } = await options({ mfa_token: mfa.token });
    const response = await getAssertion(publicKey);
    signedIn(
      await api('/api/v1/login/mfa', {
        method: 'POST',
        cookie: true,
        body: { mfa_token: mfa.token, passkey: { challenge_id, response } },
      }),
    );
  } catch (err) {
    showError($('#mfa-passkey'), err);
  }
});

async function passkeySignIn(signal) {
  const { challenge_id, options: publicKey } = await options({});
  const response = await getAssertion(publicKey, { conditional: signal !== undefined, signal });
  signedIn(
    await api('/api/v1/login/passkey', { method: 'POST', cookie: true, body: { challenge_id, response } }),
  );
}

/** Autofill: the browser offers passkeys in the e-mail field's suggestions while this waits. */
async function startConditional() {
  if (!passkeysOn || !(await PublicKeyCredential.isConditionalMediationAvailable?.())) return;
  conditional = new AbortController();
  const { signal } = conditional;
  try {
    await passkeySignIn(signal);
  } catch (err) {
    if (!signal.aborted && err instanceof Problem) showError($('#passkey-signin'), err);
  }
}

$('#passkey-button').addEventListener('click', async () => {
  // Only one WebAuthn request may be pending: the autofill one gives way to the button.
  conditional?.abort();
  $('#passkey-error').textContent = '';
  try {
    await passkeySignIn();
  } catch (err) {
    showError($('#passkey-signin'), err);
    startConditional();
  }
});

if (modules.has('passwordless')) setUpEmailSignIn({ passwordStep, signedIn, startMfa });
if (modules.has('recovery')) $('#forgot-link').hidden = false;
if (modules.has('registration')) $('#sign-up-link').hidden = false;
if (passkeysOn) $('#passkey-signin').hidden = false;

// A provider sign-in that failed says why, plainly; one that needs a second factor continues here.
const failed = providerError();
if (failed !== null) showError($('#password-form'), failed);
showProviders().catch(() => undefined);
setUpAddressFirst().catch(() => undefined);
pendingSecondFactor().then(
  (pending) => {
    if (pending === null) return;
    continueTo = pending.return_to;
    startMfa(pending);
  },
  (err) => showError($('#password-form'), err),
);

// During an application's authorization (`next` is its /account/authorize/<uid> page) the heading
// names the application, as the consent page does: people see where the sign-in leads. The
// interaction's details are public and read through the interaction's own cookie.
const authorizing = /^\/account\/authorize\/([A-Za-z0-9_-]+)$/.exec(
  new URLSearchParams(location.search).get('next') ?? '',
);
if (authorizing !== null) {
  api(`/account/authorize/${encodeURIComponent(authorizing[1])}/details`).then(
    (view) => {
      $('#title').textContent = t('js.sign_in.title_client', { client: view.client.name });
      document.title = `${t('js.sign_in.document_title_client', { client: view.client.name })} · ${document.body.dataset.appName}`;
    },
    // An expired or foreign request keeps the plain heading; the authorize page says why later.
    () => undefined,
  );
}

// Already signed in (a live refresh cookie): straight on.
restore().then(
  (user) => {
    if (user) location.replace(nextUrl());
    else if (!onLinkPage) startConditional();
  },
  () => {
    if (!onLinkPage) startConditional();
  },
);
