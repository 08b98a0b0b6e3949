// /account's organizations: the ones the person belongs to (GET /api/v1/organizations answers a
// non-admin with their own, each with their roles there), and leaving one (the member_delete of
// API §21 on themself). The last member who manages an organization cannot leave (409 last_manager).
import { $, api, currentUser, el, focusOn, modules, showError, t } from './lib.js';

const auth = { auth: true };

/** The person's organizations with their roles there, as the API gives them to this caller. */
async function myOrganizations() {
  const me = currentUser();
  if (me.role === 'admin') {
    // An admin's organizations list is every organization, without roles: their own memberships
    // come from users.roles, each organization's name from organizations.get (admins may read any).
    const { organizations } = await api(`/api/v1/users/${encodeURIComponent(me.id)}/roles`, auth);
    return Promise.all(
      organizations.map(async (m) => {
        const org = await api(`/api/v1/organizations/${encodeURIComponent(m.id)}`, auth);
        return { id: m.id, slug: m.slug, name: org.name, roles: m.roles };
      }),
    );
  }
  const items = [];
  let cursor = null;
  // Anyone else's list is their own organizations, each with "roles"; follow its pages (10 at most).
  for (let round = 0; round < 10; round++) {
    const query = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : '?limit=100';
    const page = await api(`/api/v1/organizations${query}`, auth);
    items.push(...page.data);
    cursor = page.next_cursor ?? null;
    if (!cursor) break;
  }
  return items;
}

/** Lists the person's organizations; `say` announces a join (after the join page) or a leave. */
export async function loadOrganizations(say) {
  if (!modules.has('organizations')) return;
  const items = await myOrganizations();
  const joined = new URLSearchParams(location.search).get('joined');
  const joinedOrg = joined ? items.find((org) => org.id === joined) : undefined;
  if (joinedOrg) say(t('js.account.org_joined', { name: joinedOrg.name }));
  $('#organizations-empty').hidden = items.length > 0;
  $('#organizations-list').replaceChildren(
    ...items.map((org) => {
      const item = el('li');
      const text = el('span', null, { class: 'item-text' });
      text.append(
        el('strong', org.name),
        el('span', org.slug, { class: 'badge' }),
        el('br'),
        el(
          'span',
          t('js.account.org_roles', {
            roles: org.roles.length ? org.roles.join(', ') : t('js.account.org_no_roles'),
          }),
          { class: 'muted' },
        ),
      );
      const leave = el('button', t('js.account.org_leave'), {
        type: 'button',
        class: 'danger',
        'aria-label': t('js.account.org_leave_named', { name: org.name }),
      });
      leave.addEventListener('click', async () => {
        if (!window.confirm(t('js.account.org_leave_confirm', { name: org.name }))) return;
        try {
          const me = currentUser();
          await api(
            `/api/v1/organizations/${encodeURIComponent(org.id)}/members/${encodeURIComponent(me.id)}`,
            {
              ...auth,
              method: 'DELETE',
            },
          );
          say(t('js.account.org_left', { name: org.name }));
          await loadOrganizations(() => {});
          focusOn($('#organizations-title'));
        } catch (err) {
          // The last manager cannot leave (409 last_manager): the page says what to do instead.
          const lastManager = err.code === 'last_manager';
          showError($('#organizations-section'), lastManager ? t('js.account.org_last_manager') : err);
        }
      });
      item.append(text, leave);
      return item;
    }),
  );
}
