// /account/forgot-password: asks for a recovery link. The answer is the same whether or not the
// address has an account (docs/api.md §11), so the page says exactly what the API says.
import { $, announce, api, onSubmit } from './lib.js';

onSubmit($('#forgot-form'), async ({ email }, form) => {
  const answer = await api('/api/v1/password/forgot', { method: 'POST', body: { email: email.trim() } });
  form.hidden = true;
  announce($('#sent'), answer.message);
});
