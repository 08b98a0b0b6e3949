// /account/verify-email/<token>: confirms only on a click, never on load, so a mail scanner that
// opens the link (and runs its scripts) confirms nothing (docs/api.md §15).
import { $, announce, api, focusOn, onSubmit, showError, t, tokenFromPath } from './lib.js';

const path = `/api/v1/email/verify/${encodeURIComponent(tokenFromPath())}`;
const form = $('#confirm-form');

async function start() {
  try {
    const link = await api(path);
    const change = link.purpose === 'change';
    $('#confirm-text').textContent = change
      ? t('js.verify.confirm_change', { email: link.email })
      : t('js.verify.confirm', { email: link.email });
    $('#confirm-button').textContent = change ? t('js.verify.button_change') : t('js.verify.button');
    form.hidden = false;
    $('#confirm-button').focus();
  } catch (err) {
    showError($('.card'), err);
    $('#links').hidden = false;
    focusOn($('#link-error'));
  } finally {
    $('#loading').hidden = true;
  }
}

onSubmit(form, async () => {
  const { user } = await api(path, { method: 'POST' });
  form.hidden = true;
  $('#links').hidden = false;
  announce($('#done'), t('js.verify.done', { email: user.email }));
  $('#account-link').focus();
});

start();
