// /account's connected apps: the applications the user allowed (GET /api/v1/grants), and taking
// that back (DELETE /api/v1/grants/<client_id>: consent, grants and tokens end at once).
import { $, api, el, focusOn, formatDate, modules, showError, t } from './lib.js';

const auth = { auth: true };

/** Lists the connected apps; `say` announces a revocation. */
export async function loadApps(say) {
  if (!modules.has('oauth')) return;
  const { data } = await api('/api/v1/grants', auth);
  $('#apps-empty').hidden = data.length > 0;
  $('#apps-list').replaceChildren(
    ...data.map((app) => {
      const item = el('li');
      const text = el('span', null, { class: 'item-text' });
      const apis = Object.keys(app.resources);
      text.append(
        el('strong', app.name),
        el('br'),
        el(
          'span',
          t('js.account.app_allowed', {
            date: formatDate(app.created_at),
            scopes: [...app.scopes, ...apis].join(', ') || t('js.account.app_sign_in_only'),
          }),
          { class: 'muted' },
        ),
      );
      const revoke = el('button', t('js.account.remove_access'), {
        type: 'button',
        class: 'danger',
        'aria-label': t('js.account.remove_access_named', { name: app.name }),
      });
      revoke.addEventListener('click', async () => {
        try {
          await api(`/api/v1/grants/${encodeURIComponent(app.client_id)}`, { ...auth, method: 'DELETE' });
          say(t('js.account.app_removed', { name: app.name }));
          await loadApps(say);
          focusOn($('#apps-title'));
        } catch (err) {
          showError($('#apps-section'), err);
        }
      });
      item.append(text, revoke);
      return item;
    }),
  );
}
