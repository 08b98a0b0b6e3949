// /account, "Sign-in providers" (docs/providers.md): the identities linked to this account, a
// "Link …" button per enabled provider not linked yet, and unlinking after a fresh proof
// (web/proof.js). Linking needs a sign-in from the last 5 minutes; the API says so when it is older.
import { $, api, el, focusOn, formatDate, Problem, showError, t } from './lib.js';
import { withProof } from './proof.js';

const auth = { auth: true };
let removing = null;
let announce = () => {};

function closeRemoval() {
  removing = null;
  $('#identity-remove').hidden = true;
  $('#identity-remove-form').reset();
}

$('#identity-remove-cancel').addEventListener('click', () => {
  closeRemoval();
  focusOn($('#identities-title'));
});

withProof($('#identity-remove-form'), async (proof) => {
  const { id, label } = removing;
  await api(`/api/v1/idp/identities/${encodeURIComponent(id)}`, { ...auth, method: 'DELETE', body: proof });
  closeRemoval();
  announce(t('js.account.identity_unlinked', { name: label }));
  await loadIdentities(announce);
  focusOn($('#identities-title'));
});

async function link(provider) {
  try {
    const { authorization_url } = await api(
      `/api/v1/idp/${encodeURIComponent(provider.name)}/link?return_to=${encodeURIComponent(location.pathname)}`,
      auth,
    );
    location.assign(authorization_url);
  } catch (err) {
    if (err instanceof Problem && err.code === 'reauthentication_required') {
      showError($('#identities-section'), t('js.account.link_needs_recent_sign_in'));
    } else showError($('#identities-section'), err);
  }
}

/** Lists the linked identities and the providers that can still be linked. */
export async function loadIdentities(say) {
  announce = say;
  const [{ data: identities }, { data: providers }] = await Promise.all([
    api('/api/v1/idp/identities', auth),
    api('/api/v1/idp/buttons'),
  ]);
  const list = $('#identities-list');
  if (identities.length === 0) list.replaceChildren(el('li', t('js.account.no_identities')));
  else {
    list.replaceChildren(
      ...identities.map((identity) => {
        const label = identity.display_name ?? identity.provider ?? identity.issuer;
        const text = el('span', null, { class: 'item-text' });
        text.append(
          el('strong', label),
          el('br'),
          el(
            'span',
            t('js.account.identity_linked', {
              who: identity.email ?? identity.subject,
              date: formatDate(identity.linked_at),
            }),
            { class: 'muted' },
          ),
        );
        const remove = el('button', t('js.account.unlink'), {
          type: 'button',
          class: 'danger',
          'aria-label': t('js.account.unlink_named', { name: label }),
        });
        remove.addEventListener('click', () => {
          removing = { id: identity.id, label };
          $('#identity-remove-title').textContent = t('js.account.unlink_named', { name: label });
          $('#identity-remove').hidden = false;
          focusOn($('#identity-remove-title'));
        });
        const item = el('li');
        item.append(text, remove);
        return item;
      }),
    );
  }
  const linked = new Set(identities.map((i) => i.provider));
  $('#identities-links').replaceChildren(
    ...providers
      .filter((p) => !linked.has(p.name))
      .map((p) => {
        const button = el('button', t('js.account.link_provider', { provider: p.display_name }), {
          type: 'button',
          class: 'secondary',
        });
        button.addEventListener('click', () => link(p));
        const item = el('li');
        item.append(button);
        return item;
      }),
  );
}
