// /account/verify-email/<token>: confirms only on a click, never on load, so a mail scanner that
// opens the link (and runs its scripts) confirms nothing (docs/api.md §15).
import { $, announce, api, focusOn, onSubmit, showError, tokenFromPath } from './lib.js';

const path = `/api/v1/email/verify/${encodeURIComponent(tokenFromPath())}`;
const form = $('#confirm-form');

async function start() {
  try {
    const link = await api(path);
    const change = link.purpose === 'change';
    $('#confirm-text').textContent = change
      ? `Confirm ${link.email} as the new address of your account. You will then sign in again everywhere.`
      : `Confirm that ${link.email} is your address.`;
    $('#confirm-button').textContent = change ? 'Confirm the new address' : 'Confirm my address';
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
  announce($('#done'), `Thank you: ${user.email} is confirmed.`);
  $('#account-link').focus();
});

start();
