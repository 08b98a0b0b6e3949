// /account/invitation/<token>: shows the invitation, sets the password; the person is then
// signed in (cookie session) and lands on /account. Opening the page never uses the invitation up.
import {
  $,
  acceptTokens,
  api,
  base,
  focusOn,
  formatDate,
  onSubmit,
  showError,
  t,
  tokenFromPath,
} from './lib.js';

const token = tokenFromPath();
const path = `/api/v1/invite/${encodeURIComponent(token)}`;

async function start() {
  try {
    const invitation = await api(path);
    const values = { email: invitation.email, until: formatDate(invitation.expires_at) };
    $('#invitation-text').textContent = invitation.invited_by?.name
      ? t('js.invitation.text_by', { ...values, inviter: invitation.invited_by.name })
      : t('js.invitation.text', values);
    $('#email').value = invitation.email;
    $('#accept').hidden = false;
    $('#password').focus();
  } catch (err) {
    showError($('.card'), err);
    $('#signin-link').hidden = false;
    focusOn($('#invitation-error'));
  } finally {
    $('#loading').hidden = true;
  }
}

onSubmit($('#accept-form'), async (values, form) => {
  if (values.password !== values.confirm) {
    $('#confirm').setAttribute('aria-invalid', 'true');
    showError(form, t('js.common.passwords_differ'));
    return;
  }
  acceptTokens(
    await api(`${path}/set-password`, { method: 'POST', cookie: true, body: { password: values.password } }),
  );
  form.reset();
  location.assign(`${base}/account`);
});

start();
