// Home-realm discovery on the sign-in page (docs/sso.md): while the sso module is on and an enabled
// connection claims an e-mail domain, the first step asks for the address only (with the passkey
// button); an address at an SSO domain goes straight to its identity provider, with no password
// field ever shown, and any other address then gets the password field.
import { $, api, modules, nextUrl, t } from './lib.js';

const field = $('#password-field');
const input = $('#password');
const submit = $('#password-submit');
let waiting = false;

function askForAddress(on) {
  waiting = on;
  field.hidden = on;
  // A hidden field must not be required (the form checks required fields) nor be submitted.
  input.required = !on;
  input.disabled = on;
  submit.textContent = t(on ? 'js.sign_in.discover_continue' : 'js.sign_in.discover_sign_in');
}

/** Turns the address-first step on when it applies (nothing changes otherwise). */
export async function setUpAddressFirst() {
  if (!modules.has('sso')) return;
  const { address_first } = await api('/api/v1/idp/address-first');
  if (address_first) askForAddress(true);
}

/** True while the page waits for the address alone. */
export function addressPending() {
  return waiting;
}

/** Discovery: to the connection's start (return_to kept), or on to the password. */
export async function continueWithAddress(email) {
  const { provider } = await api('/api/v1/idp/discover', { method: 'POST', body: { email } });
  if (provider !== null) {
    location.assign(`${provider.start_url}?return_to=${encodeURIComponent(nextUrl())}`);
    return;
  }
  askForAddress(false);
  input.focus();
}
