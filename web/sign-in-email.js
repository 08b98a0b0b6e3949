// Sign-in by e-mail (docs/api.md §20) on the sign-in page: ask for a link and code, type the code;
// and the mailed link's page (/account/sign-in/email/<token>), which signs in on a click, never on
// load (mail scanners open links and may run their scripts). A second factor continues as after a
// password: `startMfa` of sign-in.js takes the 403 mfa_required answer.
import { $, announce, api, onSubmit, Problem, showError, showOnly, t, tokenFromPath } from './lib.js';

const LINK_PATH = /\/account\/sign-in\/email\/[^/]+$/;
const CODE_REFUSED = t('js.email_sign_in.code_refused');
const LINK_REFUSED = t('js.email_sign_in.link_refused');

/** Whether this page is a mailed sign-in link. */
export const onLinkPage = LINK_PATH.test(location.pathname);

/**
 * Wires the e-mail sign-in parts. `passwordStep` is the step they replace; `signedIn(tokens)` and
 * `startMfa(problem)` are the sign-in page's own.
 */
export function setUpEmailSignIn({ passwordStep, signedIn, startMfa }) {
  const emailStep = $('#email-step');
  const requestForm = $('#email-request-form');
  const codeForm = $('#email-code-form');
  let address = null;

  async function signInWith(body, form, refused) {
    try {
      signedIn(await api('/api/v1/login/email/verify', { method: 'POST', cookie: true, body }));
    } catch (err) {
      if (err instanceof Problem && err.code === 'mfa_required') startMfa(err.body);
      else if (err instanceof Problem && err.code === 'invalid_credentials') showError(form, refused);
      else throw err;
    }
  }

  async function send(email) {
    const answer = await api('/api/v1/login/email', { method: 'POST', body: { email } });
    address = email;
    codeForm.hidden = false;
    // The API's sentence stays English (API §24): the page says the same in its own language.
    void answer;
    announce($('#email-sent'), t('js.email_sign_in.sent'));
    $('#email-code').value = '';
    $('#email-code').focus();
  }

  $('#email-signin-offer').hidden = false;
  $('#email-signin-button').addEventListener('click', () => {
    const typed = $('#email').value.trim();
    if (typed) $('#signin-email').value = typed;
    showOnly(emailStep, passwordStep);
    $('#email-title').focus();
  });

  onSubmit(requestForm, (values) => send(values.email.trim()));

  $('#email-resend').addEventListener('click', async () => {
    if (address === null) return;
    try {
      await send(address);
    } catch (err) {
      showError(codeForm, err);
    }
  });

  onSubmit(codeForm, (values) =>
    signInWith({ email: address, code: values.code.trim() }, codeForm, CODE_REFUSED),
  );

  if (onLinkPage) {
    const linkForm = $('#link-form');
    showOnly($('#link-step'), passwordStep);
    onSubmit(linkForm, () => signInWith({ token: tokenFromPath() }, linkForm, LINK_REFUSED));
    $('#link-button').focus();
  }
}
