// /account's organizations: the ones the person belongs to (GET /api/v1/organizations answers a
// non-admin with their own, each with their roles there), and leaving one (the member_delete of
// API §21 on themself). The last member who manages an organization cannot leave (409 last_manager).
import { $, api, currentUser, el, focusOn, modules, showError } from './lib.js';

const auth = { auth: true };

const LAST_MANAGER =
  'You are the last person who manages this organization, so you cannot leave it. ' +
  'Give someone else the right to manage its members first, or ask an administrator.';

/**
 * Lists the person's organizations; `say` announces a leave. An admin's list is every
 * organization, so for them the section keeps to the ones they are a member of (`roles` present).
 */
export async function loadOrganizations(say) {
  if (!modules.has('organizations')) return;
  const items = [];
  let cursor = null;
  // The person's own organizations are few; follow the pages anyway (at most 10 rounds).
  for (let round = 0; round < 10; round++) {
    const query = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : '?limit=100';
    const page = await api(`/api/v1/organizations${query}`, auth);
    items.push(...page.data.filter((org) => Array.isArray(org.roles)));
    cursor = page.next_cursor ?? null;
    if (!cursor) break;
  }
  const joined = new URLSearchParams(location.search).get('joined');
  const joinedOrg = joined ? items.find((org) => org.id === joined) : undefined;
  if (joinedOrg) say(`You joined ${joinedOrg.name}.`);
  $('#organizations-empty').hidden = items.length > 0;
  $('#organizations-list').replaceChildren(
    ...items.map((org) => {
      const item = el('li');
      const text = el('span', null, { class: 'item-text' });
      text.append(
        el('strong', org.name),
        el('span', org.slug, { class: 'badge' }),
        el('br'),
        el('span', `Your roles: ${org.roles.length ? org.roles.join(', ') : 'none'}`, { class: 'muted' }),
      );
      const leave = el('button', 'Leave', {
        type: 'button',
        class: 'danger',
        'aria-label': `Leave ${org.name}`,
      });
      leave.addEventListener('click', async () => {
        if (!window.confirm(`Leave ${org.name}? You will need a new invitation to come back.`)) return;
        try {
          const me = currentUser();
          await api(
            `/api/v1/organizations/${encodeURIComponent(org.id)}/members/${encodeURIComponent(me.id)}`,
            {
              ...auth,
              method: 'DELETE',
            },
          );
          say(`You left ${org.name}.`);
          await loadOrganizations(() => {});
          focusOn($('#organizations-title'));
        } catch (err) {
          showError($('#organizations-section'), err.code === 'last_manager' ? LAST_MANAGER : err);
        }
      });
      item.append(text, leave);
      return item;
    }),
  );
}
