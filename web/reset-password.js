// /account/reset-password/<token>: opening the page only reads the link (GET never consumes it);
// the password is set only when the form is submitted, or when the passkey button is used. An
// account with a second factor proves it here too (docs/api.md §11): a code, or a passkey.
import {
  $,
  announce,
  api,
  clearError,
  focusOn,
  getAssertion,
  modules,
  onSubmit,
  Problem,
  passkeysSupported,
  showError,
  t,
  tokenFromPath,
} from './lib.js';

const token = tokenFromPath();
const path = `/api/v1/password/reset/${encodeURIComponent(token)}`;
const form = $('#reset-form');
const passkeyButton = $('#passkey-button');
const passkeysOn = modules.has('passkeys') && passkeysSupported;
let codeRequired = false;

/** Shows what the reset will ask for; `methods` as the API lists them (absent: a code). */
function requireFactor(methods) {
  const listed = Array.isArray(methods) && methods.length > 0 ? methods : ['totp', 'recovery_code'];
  const totp = listed.includes('totp');
  codeRequired = totp || listed.includes('recovery_code');
  $('#code-field').hidden = !codeRequired;
  $('#code-label').textContent = totp ? t('js.reset.code_label_totp') : t('js.reset.code_label_recovery');
  if (codeRequired) $('#code').setAttribute('required', '');
  else $('#code').removeAttribute('required');
  passkeyButton.hidden = !(listed.includes('passkey') && passkeysOn);
  $('#code-hint').textContent = passkeyButton.hidden
    ? t('js.reset.code_hint')
    : t('js.reset.code_hint_passkey');
}

async function start() {
  try {
    const link = await api(path);
    $('#email').value = link.email;
    if (link.mfa_required) requireFactor(link.methods);
    form.hidden = false;
    $('#password').focus();
  } catch (err) {
    showError($('.card'), err);
    $('#links').hidden = false;
    focusOn($('#link-error'));
  } finally {
    $('#loading').hidden = true;
  }
}

/** Why the two password fields cannot be sent yet, marking the field; null when they can. */
function passwordProblem(values) {
  for (const [name, label] of [
    ['password', t('js.common.new_password')],
    ['confirm', t('js.common.type_it_again')],
  ]) {
    if (!values[name]) {
      $(`#${name}`).setAttribute('aria-invalid', 'true');
      return t('js.common.field_required', { label });
    }
  }
  if (values.password !== values.confirm) {
    $('#confirm').setAttribute('aria-invalid', 'true');
    return t('js.common.passwords_differ');
  }
  return null;
}

/** Sends the reset; a 403 mfa_required (a factor added since the page opened) shows the factor fields. */
async function reset(body) {
  try {
    await api(path, { method: 'POST', body });
  } catch (err) {
    if (err instanceof Problem && err.code === 'mfa_required') {
      requireFactor(err.body.methods);
      if (codeRequired) $('#code').focus();
    }
    throw err;
  }
  form.hidden = true;
  $('#links').hidden = false;
  $('#again-link').hidden = true;
  announce($('#done'), t('js.reset.done'));
  $('#signin-link').focus();
}

onSubmit(form, async (values) => {
  const problem = passwordProblem(values);
  if (problem) {
    showError(form, problem);
    return;
  }
  const body = { password: values.password };
  if (codeRequired) body.mfa_code = values.code.trim();
  await reset(body);
});

// The passkey instead of a code: options for this link (its token names the user), then the
// browser's assertion, then the same reset with `passkey`.
passkeyButton.addEventListener('click', async () => {
  clearError(form);
  const values = Object.fromEntries(new FormData(form));
  const problem = passwordProblem(values);
  if (problem) {
    showError(form, problem);
    return;
  }
  passkeyButton.setAttribute('disabled', '');
  form.setAttribute('aria-busy', 'true');
  try {
    const { challenge_id, options } = await api('/api/v1/passkeys/authentication/options', {
      method: 'POST',
      body: { reset_token: token },
    });
    const response = await getAssertion(options);
    await reset({ password: values.password, passkey: { challenge_id, response } });
  } catch (err) {
    showError(form, err);
  } finally {
    passkeyButton.removeAttribute('disabled');
    form.removeAttribute('aria-busy');
  }
});

start();
