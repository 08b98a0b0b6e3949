// /account/forgot-password: asks for a recovery link. The answer is the same whether or not the
// address has an account (docs/api.md §11), so the page says exactly what the API says.
import { $, announce, api, onSubmit, t } from './lib.js';

onSubmit($('#forgot-form'), async ({ email }, form) => {
  const answer = await api('/api/v1/password/forgot', { method: 'POST', body: { email: email.trim() } });
  form.hidden = true;
  // The API's sentence stays English (API §24): the page says the same in its own language.
  void answer;
  announce($('#sent'), t('js.forgot.sent'));
});
