// /account/reset-password/<token>: opening the page only reads the link (GET never consumes it);
// the password is set only when the form is submitted.
import { $, announce, api, focusOn, onSubmit, showError, tokenFromPath } from './lib.js';

const path = `/api/v1/password/reset/${encodeURIComponent(tokenFromPath())}`;
const form = $('#reset-form');
let mfaRequired = false;

function requireCode() {
  mfaRequired = true;
  $('#code-field').hidden = false;
  $('#code').setAttribute('required', '');
}

async function start() {
  try {
    const link = await api(path);
    $('#email').value = link.email;
    if (link.mfa_required) requireCode();
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

onSubmit(form, async (values) => {
  if (values.password !== values.confirm) {
    $('#confirm').setAttribute('aria-invalid', 'true');
    showError(form, 'The two passwords do not match.');
    return;
  }
  const body = { password: values.password };
  if (mfaRequired) body.mfa_code = values.code.trim();
  try {
    await api(path, { method: 'POST', body });
  } catch (err) {
    if (err.code === 'mfa_required' && !mfaRequired) {
      requireCode();
      $('#code').focus();
    }
    throw err;
  }
  form.hidden = true;
  $('#links').hidden = false;
  $('#again-link').hidden = true;
  announce($('#done'), 'Your password was changed. Sign in with the new password.');
  $('#signin-link').focus();
});

start();
