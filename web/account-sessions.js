// /account's sessions section: where the user is signed in, and signing other sessions out.
import { $, api, deviceName, el, focusOn, formatDate, modules, showError, t } from './lib.js';

const auth = { auth: true };

function describeSession(session) {
  return `${deviceName(session.user_agent)} · ${session.ip ?? t('js.account.unknown_address')}`;
}

/** Lists the live sessions; `say` announces a sign-out. */
export async function loadSessions(say) {
  if (!modules.has('sessions')) return;
  const { data } = await api('/api/v1/sessions', auth);
  $('#sessions-list').replaceChildren(
    ...data.map((session) => {
      const item = el('li');
      const text = el('span', null, { class: 'item-text' });
      text.append(el('strong', describeSession(session)));
      if (session.current) text.append(el('span', t('js.account.this_browser'), { class: 'badge' }));
      text.append(
        el('br'),
        el(
          'span',
          t('js.account.session_dates', {
            created: formatDate(session.created_at),
            used: formatDate(session.last_used_at),
          }),
          { class: 'muted' },
        ),
      );
      item.append(text);
      if (!session.current) {
        const revoke = el('button', t('js.account.sign_out'), {
          type: 'button',
          class: 'danger',
          'aria-label': t('js.account.sign_out_named', { session: describeSession(session) }),
        });
        revoke.addEventListener('click', async () => {
          try {
            await api(`/api/v1/sessions/${encodeURIComponent(session.id)}`, { ...auth, method: 'DELETE' });
            say(t('js.account.session_signed_out'));
            await loadSessions(say);
            focusOn($('#sessions-title'));
          } catch (err) {
            showError($('#sessions-section'), err);
          }
        });
        item.append(revoke);
      }
      return item;
    }),
  );
}
