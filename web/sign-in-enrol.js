// REQUIRE_MFA (docs/mfa.md): a sign-in refused with 403 mfa_enrollment_required carries an
// enrolment-only token. This step adds an authenticator app with it and the password just typed
// (enrolment asks for the current password), shows the recovery codes, ends the enrolment-only
// session, and the person signs in again with the new factor. The token is kept in memory here
// only: it is never the page's session.
import { $, api, el, focusOn, onSubmit, showOnly } from './lib.js';

let token = null;

/** Starts the enrolment step; `hide` are the steps it replaces. Throws the API's refusal. */
export async function startEnrolment(problem, password, ...hide) {
  const bearer = problem.enrollment_token;
  const started = await api('/api/v1/mfa/totp', {
    method: 'POST',
    bearer,
    body: { current_password: password },
  });
  token = bearer;
  // The SVG is shown as an image (an object URL): it cannot run script or touch the page.
  $('#enrol-qr').src = URL.createObjectURL(new Blob([started.qr_svg], { type: 'image/svg+xml' }));
  $('#enrol-secret').textContent = started.secret;
  showOnly($('#enrol-step'), ...hide);
  focusOn($('#enrol-title'));
}

onSubmit($('#enrol-form'), async (values, form) => {
  if (token === null) return;
  const { recovery_codes } = await api('/api/v1/mfa/totp/confirm', {
    method: 'POST',
    bearer: token,
    body: { code: values.code.trim() },
  });
  // The enrolment-only session has done its work; the next sign-in asks for the new factor.
  await api('/api/v1/logout', { method: 'POST', bearer: token }).catch(() => undefined);
  token = null;
  form.hidden = true;
  $('#enrol-secret').textContent = '';
  $('#enrol-codes').replaceChildren(...(recovery_codes ?? []).map((code) => el('li', code)));
  $('#enrol-done').hidden = false;
  focusOn($('#enrol-done-title'));
});
