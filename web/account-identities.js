// /account, "Sign-in providers" (docs/providers.md): the identities linked to this account, a
// "Link …" button per enabled provider not linked yet, and unlinking after a fresh proof
// (web/proof.js). Linking needs a sign-in from the last 5 minutes; the API says so when it is older.
import { $, api, el, focusOn, formatDate, Problem, showError } from './lib.js';
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
  announce(`${label} was unlinked.`);
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
      showError(
        $('#identities-section'),
        'For your safety, linking needs a recent sign-in. Sign out, sign in again, then link.',
      );
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
  if (identities.length === 0) list.replaceChildren(el('li', 'No provider is linked yet.'));
  else {
    list.replaceChildren(
      ...identities.map((identity) => {
        const label = identity.display_name ?? identity.provider ?? identity.issuer;
        const text = el('span', null, { class: 'item-text' });
        text.append(
          el('strong', label),
          el('br'),
          el('span', `${identity.email ?? identity.subject}, linked ${formatDate(identity.linked_at)}`, {
            class: 'muted',
          }),
        );
        const remove = el('button', 'Unlink', {
          type: 'button',
          class: 'danger',
          'aria-label': `Unlink ${label}`,
        });
        remove.addEventListener('click', () => {
          removing = { id: identity.id, label };
          $('#identity-remove-title').textContent = `Unlink ${label}`;
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
        const button = el('button', `Link ${p.display_name}`, { type: 'button', class: 'secondary' });
        button.addEventListener('click', () => link(p));
        const item = el('li');
        item.append(button);
        return item;
      }),
  );
}
