// Dynamic registration (docs/console.md, docs/oauth.md): an admin makes an initial access token through
// POST /api/v1/clients/registration-tokens, the service `gatehouse clients registration-token` uses.
// The token is shown once, like a client secret.

import { call, can, explain, hideSecret, notify, showSecret } from './admin-core.js';
import { $, clearError, formatDate, onSubmit, Problem, t } from './lib.js';

const ENDPOINT = 'POST /api/v1/clients/registration-tokens';
const form = $('#registration-form');
const panel = $('#registration-token');

/** Shown while the endpoint is listed (the oauth module is on); the panel starts hidden. */
export function showRegistrationToken() {
  hideSecret(panel);
  form.reset();
  clearError(form);
  $('#registration-section').hidden = !can(ENDPOINT);
  // The card says what OAUTH_DYNAMIC_REGISTRATION is on this service (the page carries it), and
  // offers the token form only where tokens are used.
  const state = document.body.dataset.registration ?? 'off';
  $('#registration-state-text').textContent = t(
    `js.admin-oauth.registration_${STATES.includes(state) ? state : 'off'}`,
  );
  $('#registration-off').hidden = state !== 'off';
  $('#registration-open').hidden = state !== 'open';
  $('#registration-token-hint').hidden = state !== 'token';
  form.hidden = state !== 'token';
}

const STATES = ['off', 'token', 'open'];

export function initRegistrationToken() {
  onSubmit(form, async (values) => {
    let answer;
    try {
      answer = await call('/api/v1/clients/registration-tokens', {
        method: 'POST',
        body: { ttl_s: Number(values.ttl_s) },
      });
    } catch (err) {
      // Field errors keep their marks; a refusal (the setting is not `token`) says why.
      throw err instanceof Problem && err.code === 'validation_failed' ? err : explain(err);
    }
    notify(t('js.admin-oauth.registration_token_created', { until: formatDate(answer.expires_at) }));
    showSecret(panel, answer.token);
  });
}
