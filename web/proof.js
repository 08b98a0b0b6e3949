// "Confirm it is you" (docs/api.md §16): removing a passkey, turning the authenticator app off,
// making new recovery codes and changing the e-mail address each send a fresh proof with the call:
// the current password, a code (authenticator app or recovery code), or a passkey. Each of those
// forms holds a `fieldset.proof` with the password and code fields and a "Use a passkey instead"
// button; which of them show depends on what the account has.
import { $, api, clearError, getAssertion, onSubmit, passkeysSupported, showError, t } from './lib.js';

const auth = { auth: true };
const forms = [];
let has = { password: true, code: false, passkey: false };

/** Shows the proof fields the account can use: `{ code, passkey }` from GET /mfa (password always). */
export function offerProofs(available) {
  has = { password: true, ...available, passkey: Boolean(available.passkey) && passkeysSupported };
  for (const form of forms) {
    $('[data-proof-code]', form).hidden = !has.code;
    $('[data-proof-passkey]', form).hidden = !has.passkey;
  }
}

/** The proof typed into a form: the password if given, else the code; null when neither is. */
function typedProof(values) {
  if (values.current_password) return { current_password: values.current_password };
  const code = (values.code ?? '').trim();
  if (code) return { code };
  return null;
}

/** A passkey proof: options bound to this signed-in user (Bearer, empty body), then the assertion. */
async function passkeyProof() {
  const { challenge_id, options } = await api('/api/v1/passkeys/authentication/options', {
    ...auth,
    method: 'POST',
    body: {},
  });
  const response = await getAssertion(options);
  return { passkey: { challenge_id, response } };
}

/** The sentence when nothing was given, naming what this account can use. */
function askForProof() {
  const ways = has.code ? 'code' : 'password';
  return t(has.passkey ? 'js.proof.ask_passkey' : 'js.proof.ask', { ways });
}

/**
 * Wires a form whose call needs a fresh proof. `action(proof, values, form)` makes the call with
 * the proof spread into its body; the form is reset after it succeeds.
 */
export function withProof(form, action) {
  forms.push(form);
  onSubmit(form, async (values) => {
    const proof = typedProof(values);
    if (!proof) {
      const first = $('[data-proof] input, .proof input', form);
      first?.setAttribute('aria-invalid', 'true');
      showError(form, askForProof());
      return;
    }
    await action(proof, values, form);
    form.reset();
  });
  const button = $('[data-proof-passkey]', form);
  button.addEventListener('click', async () => {
    clearError(form);
    // The form's own required fields (the new address) are checked as a submit would.
    for (const input of form.querySelectorAll('input[required]')) {
      if (!input.value.trim()) {
        input.setAttribute('aria-invalid', 'true');
        const label =
          form.querySelector(`label[for="${input.id}"]`)?.textContent ?? t('js.common.this_field');
        showError(form, t('js.common.field_required', { label: label.trim() }));
        return;
      }
    }
    const values = Object.fromEntries(new FormData(form));
    button.setAttribute('disabled', '');
    form.setAttribute('aria-busy', 'true');
    try {
      await action(await passkeyProof(), values, form);
      form.reset();
    } catch (err) {
      showError(form, err);
    } finally {
      button.removeAttribute('disabled');
      form.removeAttribute('aria-busy');
    }
  });
}
