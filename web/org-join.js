// /account/organizations/join/<token>: shows the invitation to an organization. A person signed in
// with the invited address accepts with one click; a new person chooses a password and gets the
// account (then signed in, cookie session); anyone else is told what to do. Opening the page never
// uses the invitation up: only a click does (mail scanners open links too).
import {
  $,
  acceptTokens,
  api,
  base,
  focusOn,
  formatDate,
  onSubmit,
  restore,
  showError,
  signOut,
  t,
  tokenFromPath,
} from './lib.js';

const token = tokenFromPath();
const path = `/api/v1/organization-invitations/${encodeURIComponent(token)}`;
const here = `/account/organizations/join/${encodeURIComponent(token)}`;
let invitation = null;

function rolesText(roles) {
  return roles.length === 0 ? t('js.org-join.no_role') : roles.join(', ');
}

function show(id) {
  for (const section of ['#accept-signed-in', '#other-account', '#sign-in-first', '#create-account']) {
    $(section).hidden = section !== id;
  }
}

function fail(err) {
  showError($('.card'), err);
  $('#account-link').hidden = false;
  focusOn($('#join-error'));
}

async function start() {
  try {
    invitation = await api(path);
    const organization = invitation.organization.name;
    $('#title').textContent = t('js.org-join.title', { organization });
    $('#join-text').textContent = t('js.org-join.text', {
      organization,
      email: invitation.email,
      until: formatDate(invitation.expires_at),
    });
    $('#join-roles').textContent = t('js.org-join.roles', { roles: rolesText(invitation.roles) });
    $('#details').hidden = false;
    const user = await restore();
    if (user && user.email === invitation.email) {
      $('#signed-in-text').textContent = t('js.org-join.signed_in', { email: user.email });
      show('#accept-signed-in');
      $('#accept-form button').focus();
    } else if (user) {
      $('#other-account-text').textContent = t('js.org-join.other_account', {
        email: user.email,
        invited: invitation.email,
      });
      show('#other-account');
    } else if (invitation.account_exists) {
      $('#sign-in-link').href = `${base}/account/sign-in?next=${encodeURIComponent(here)}`;
      show('#sign-in-first');
    } else {
      $('#email').value = invitation.email;
      show('#create-account');
      $('#name').focus();
    }
  } catch (err) {
    fail(err);
  } finally {
    $('#loading').hidden = true;
  }
}

onSubmit($('#accept-form'), async () => {
  await api(`${path}/accept`, { method: 'POST', auth: true });
  location.assign(`${base}/account?joined=${encodeURIComponent(invitation.organization.id)}`);
});

onSubmit($('#create-form'), async (values, form) => {
  if (values.password !== values.confirm) {
    $('#confirm').setAttribute('aria-invalid', 'true');
    showError(form, t('js.common.passwords_differ'));
    return;
  }
  const body = { password: values.password, ...(values.name.trim() ? { name: values.name.trim() } : {}) };
  acceptTokens(await api(`${path}/accept`, { method: 'POST', cookie: true, body }));
  form.reset();
  location.assign(`${base}/account?joined=${encodeURIComponent(invitation.organization.id)}`);
});

$('#switch-account').addEventListener('click', async () => {
  await signOut().catch(() => {});
  location.assign(`${base}/account/sign-in?next=${encodeURIComponent(here)}`);
});

start();
