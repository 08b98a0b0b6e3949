// /account/sign-up (module `registration`): creates an account through POST /api/v1/signup. The
// answer is the same 202 whether or not the address is taken (docs/api.md §12: no oracle), so the
// page says exactly what the API says; the account signs in once its address is confirmed by mail.
import { $, announce, api, onSubmit, showError, t } from './lib.js';

onSubmit($('#sign-up-form'), async (values, form) => {
  if (values.password !== values.confirm) {
    $('#confirm').setAttribute('aria-invalid', 'true');
    showError(form, t('js.common.passwords_differ'));
    return;
  }
  const name = values.name.trim();
  const body = { email: values.email.trim(), password: values.password, ...(name ? { name } : {}) };
  const answer = await api('/api/v1/signup', { method: 'POST', body });
  form.reset();
  form.hidden = true;
  // The API's sentence stays English (API §24): the page says the same in its own language.
  void answer;
  announce($('#sent'), t('js.sign_up.sent'));
});
