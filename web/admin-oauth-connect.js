// A client's "Connect your app" card (docs/console.md): what an app developer needs to sign people in
// with this client, read from the service's own discovery document (so the issuer and endpoints
// are the ones the libraries will see), and a quick start for three common libraries filled in with
// the client's values. The secret is never in it: it is shown once, and the snippets read it from
// the environment.

import { announce, base, el, t } from './lib.js';

const card = document.querySelector('#client-connect');
let discovery = null;

/** The discovery document, read once per console visit (the issuer does not change while running). */
async function readDiscovery() {
  if (discovery === null) {
    const res = await fetch(`${base}/.well-known/openid-configuration`, {
      headers: { accept: 'application/json' },
    });
    if (!res.ok) throw new Error(t('js.admin-oauth.discovery_answered', { status: res.status }));
    discovery = await res.json();
  }
  return discovery;
}

const ENDPOINTS = [
  ['js.admin-oauth.authorization_endpoint', 'authorization_endpoint'],
  ['js.admin-oauth.token_endpoint', 'token_endpoint'],
  ['js.admin-oauth.userinfo_endpoint', 'userinfo_endpoint'],
  ['js.admin-oauth.jwks_uri', 'jwks_uri'],
  ['js.admin-oauth.end_session_endpoint', 'end_session_endpoint'],
  ['js.admin-oauth.revocation_endpoint', 'revocation_endpoint'],
];

/** A plain-http issuer works only on the developer's own machine; openid-client needs to be told. */
function loopbackHttp(issuer) {
  const url = new URL(issuer);
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

/** The app's own address, from its first redirect URI (a placeholder while it has none). */
function appOrigin(c) {
  try {
    return new URL(c.redirect_uris[0]).origin;
  } catch {
    return '<your app origin>';
  }
}

function quickStarts(c, d) {
  const confidential = c.type === 'confidential';
  const secret = confidential ? 'process.env.GATEHOUSE_CLIENT_SECRET' : 'undefined';
  const scope =
    c.scopes.filter((s) => ['openid', 'profile', 'email', 'offline_access'].includes(s)).join(' ') ||
    'openid';
  const app = appOrigin(c);
  const insecure = loopbackHttp(d.issuer);
  const openidClient = `// npm install openid-client   (redirect URI: ${c.redirect_uris[0] ?? `${app}/callback`})
import * as client from 'openid-client';

const config = await client.discovery(
  new URL('${d.issuer}'),
  '${c.client_id}',
  ${secret},${confidential ? '' : '\n  client.None(),'}${insecure ? `${confidential ? '\n  undefined,' : ''}\n  { execute: [client.allowInsecureRequests] }, // http is for localhost only` : ''}
);

// Sign in: keep code_verifier in the user's session, then redirect to url.
const code_verifier = client.randomPKCECodeVerifier();
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: '${c.redirect_uris[0] ?? `${app}/callback`}',
  scope: '${scope}',
  code_challenge: await client.calculatePKCECodeChallenge(code_verifier),
  code_challenge_method: 'S256',
});

// Back at the redirect URI (currentUrl: the full URL of that request):
const tokens = await client.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: code_verifier });
console.log(tokens.claims()); // sub, email, name …`;
  const authJs = `// npm install @auth/express   (redirect URI: ${app}/auth/callback/gatehouse; AUTH_SECRET set)
import { ExpressAuth } from '@auth/express';

app.set('trust proxy', true);
app.use('/auth/*', ExpressAuth({
  providers: [{
    id: 'gatehouse',
    name: '${document.body.dataset.appName ?? 'Gatehouse'}',
    type: 'oidc',
    issuer: '${d.issuer}',
    clientId: '${c.client_id}',
    clientSecret: ${secret},${confidential ? '' : "\n    client: { token_endpoint_auth_method: 'none' },"}
    authorization: { params: { scope: '${scope}' } },
  }],
}));`;
  const eoc = `// npm install express-openid-connect   (redirect URI: ${app}/callback)
const { auth, requiresAuth } = require('express-openid-connect');

app.use(auth({
  issuerBaseURL: '${d.issuer}',
  baseURL: '${app}',
  clientID: '${c.client_id}',
  clientSecret: ${secret},
  secret: process.env.SESSION_SECRET, // a long random string for the app's session cookie
  authRequired: false,
  authorizationParams: { response_type: 'code', scope: '${scope}' },
}));
app.get('/profile', requiresAuth(), (req, res) => res.json(req.oidc.user));`;
  return [
    ['openid-client', openidClient],
    ['Auth.js (@auth/express)', authJs],
    ['express-openid-connect', eoc],
  ];
}

function ddCode(value) {
  const dd = el('dd');
  dd.append(el('code', value, { dir: 'ltr' }));
  return dd;
}

function snippet(title, code, index) {
  const section = el('section', null, { class: 'quick-start', 'aria-labelledby': `qs-${index}` });
  const status = el('p', null, { class: 'muted', role: 'status' });
  const copy = el('button', t('js.admin-oauth.copy'), { type: 'button', class: 'secondary small' });
  copy.setAttribute('aria-label', t('js.admin-oauth.copy_quick_start', { title }));
  // Code reads left to right in a right-to-left page too.
  const pre = el('pre', null, { dir: 'ltr' });
  pre.append(el('code', code));
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(code);
      announce(status, t('js.admin-oauth.copied'));
    } catch {
      getSelection()?.selectAllChildren(pre);
      announce(status, t('js.admin-oauth.copy_by_hand'));
    }
  });
  const head = el('div', null, { class: 'quick-start-head' });
  head.append(el('h3', title, { id: `qs-${index}` }), copy);
  section.append(head, pre, status);
  return section;
}

/** Fills the card for client `c` and shows it; a discovery that fails is said in the card. */
export async function showConnect(c) {
  card.hidden = false;
  document.querySelector('#connect-title').textContent = t('js.admin-oauth.connect_name', { name: c.name });
  const facts = document.querySelector('#connect-facts');
  const starts = document.querySelector('#connect-quick-starts');
  const error = document.querySelector('#connect-error');
  facts.replaceChildren();
  starts.replaceChildren();
  error.textContent = '';
  let d;
  try {
    d = await readDiscovery();
  } catch (err) {
    error.textContent = t('js.admin-oauth.endpoints_unreadable', { error: err.message });
    return;
  }
  const rows = [
    [t('js.admin-oauth.client_id'), c.client_id],
    [t('js.admin-oauth.issuer'), d.issuer],
    [t('js.admin-oauth.discovery_url'), `${d.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`],
    ...ENDPOINTS.filter(([, key]) => typeof d[key] === 'string').map(([term, key]) => [t(term), d[key]]),
  ];
  for (const [term, value] of rows) facts.append(el('dt', term), ddCode(value));
  quickStarts(c, d).forEach(([title, code], i) => {
    starts.append(snippet(title, code, i));
  });
}

export function hideConnect() {
  card.hidden = true;
}
