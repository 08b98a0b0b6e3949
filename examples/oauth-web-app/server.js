// "Sign in with Gatehouse": a small web application on plain node:http that signs people in with
// the authorization code flow and PKCE through openid-client (its documented v6 API), keeps its own
// session in a cookie, shows who signed in, calls its API with an access token minted for that API
// alone (RFC 8707 `resource`), refreshes, and signs out by RP-initiated logout. docs/oauth.md walks
// through registering it; test/examples/oauth-web-app.test.ts runs it in Chromium.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import * as oidc from 'openid-client';

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const issuer = new URL(env('GATEHOUSE_URL')); // Gatehouse's PUBLIC_URL
const clientId = env('CLIENT_ID');
const clientSecret = env('CLIENT_SECRET');
// Where browsers reach this application (https; a TLS proxy in front of this port in production).
const appUrl = new URL(env('APP_URL'));
const apiUrl = env('API_URL'); // where this application reaches its API
const apiResource = env('API_RESOURCE'); // the API's identifier registered in Gatehouse
const apiScope = env('API_SCOPE', 'read:notes');
const redirectUri = new URL('/callback', appUrl).href;
const signedOutUri = new URL('/signed-out', appUrl).href;

// openid-client refuses plain http; Gatehouse on a developer's own machine (or in the example's
// test) is http://localhost, which is the one place that is allowed here.
const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);
const discoveryOptions =
  issuer.protocol === 'http:' && loopback ? { execute: [oidc.allowInsecureRequests] } : {};
let configuration;
const config = async () => {
  configuration ??= oidc.discovery(issuer, clientId, clientSecret, undefined, discoveryOptions);
  try {
    return await configuration;
  } catch (err) {
    configuration = undefined; // try discovery again on the next request
    throw err;
  }
};

// Sessions live in this process's memory, keyed by a random id in a cookie that scripts cannot read
// (HttpOnly) and other sites cannot send along with a POST (SameSite=Lax).
const sessions = new Map();
const secure = appUrl.protocol === 'https:';
const COOKIE = secure ? '__Host-session' : 'session';

function sessionOf(req) {
  const cookie = (req.headers.cookie ?? '').split(';').map((c) => c.trim().split('='));
  const id = cookie.find(([name]) => name === COOKIE)?.[1];
  return id && sessions.has(id) ? { id, data: sessions.get(id) } : null;
}
function newSession(res, data) {
  const id = randomBytes(32).toString('base64url');
  sessions.set(id, data);
  res.setHeader('set-cookie', `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`);
  return id;
}
function endSession(res, session) {
  if (session) sessions.delete(session.id);
  res.setHeader(
    'set-cookie',
    `${COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`,
  );
}

const html = (s) =>
  String(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
function page(res, status, title, body) {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on the forms' POSTs.
    'referrer-policy': 'same-origin',
  });
  res.end(`<!doctype html><html lang="en"><meta charset="utf-8"><title>${html(title)}</title>
<body><main><h1>${html(title)}</h1>${body}</main></body></html>`);
}
const redirect = (res, location) => {
  res.writeHead(303, { location, 'cache-control': 'no-store' });
  res.end();
};

/** Stores a token response in the session: the person (from the ID token) and the tokens. */
function keep(data, tokens) {
  data.user ??= tokens.claims();
  data.idToken = tokens.id_token ?? data.idToken;
  data.accessToken = tokens.access_token;
  data.refreshToken = tokens.refresh_token ?? data.refreshToken;
  data.expiresAt = Date.now() + (tokens.expiresIn() ?? 0) * 1000;
}

async function refresh(data) {
  // Refresh tokens rotate on every use (docs/oauth.md): keep the new one.
  keep(data, await oidc.refreshTokenGrant(await config(), data.refreshToken, { resource: apiResource }));
  data.refreshes = (data.refreshes ?? 0) + 1;
}

async function signIn(res) {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  newSession(res, { pending: { codeVerifier, state, nonce } });
  const url = oidc.buildAuthorizationUrl(await config(), {
    redirect_uri: redirectUri,
    // offline_access asks for a refresh token; OpenID Connect honours it only with prompt=consent.
    scope: `openid email profile offline_access ${apiScope}`,
    resource: apiResource,
    prompt: 'consent',
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  redirect(res, url.href);
}

async function callback(req, res, session) {
  const pending = session?.data.pending;
  if (!pending) return page(res, 400, 'Sign-in expired', '<p><a href="/">Start again</a></p>');
  let tokens;
  try {
    tokens = await oidc.authorizationCodeGrant(await config(), new URL(req.url, appUrl), {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
    });
  } catch (err) {
    endSession(res, session);
    const reason = err instanceof oidc.AuthorizationResponseError ? err.error : 'the sign-in failed';
    return page(res, 400, 'Not signed in', `<p>${html(reason)}</p><p><a href="/">Try again</a></p>`);
  }
  // A new session id after sign-in, so an id planted before it is worth nothing.
  sessions.delete(session.id);
  const data = {};
  keep(data, tokens);
  newSession(res, data);
  redirect(res, '/');
}

async function notes(res, data) {
  if (Date.now() > data.expiresAt - 10_000 && data.refreshToken) await refresh(data);
  const answer = await fetch(`${apiUrl}/notes`, { headers: { authorization: `Bearer ${data.accessToken}` } });
  if (answer.status !== 200) {
    return page(
      res,
      502,
      'Notes',
      `<p>The notes API answered ${answer.status}.</p><p><a href="/">Back</a></p>`,
    );
  }
  const body = await answer.json();
  const items = body.notes.map((n) => `<li>${html(n.text)}</li>`).join('');
  page(res, 200, 'Notes', `<p>For ${html(body.owner)}:</p><ul>${items}</ul><p><a href="/">Back</a></p>`);
}

async function signOut(res, session) {
  endSession(res, session);
  if (!session?.data.user) return redirect(res, '/signed-out');
  const c = await config();
  // Ends the refresh token now rather than leaving an offline grant behind.
  if (session.data.refreshToken) await oidc.tokenRevocation(c, session.data.refreshToken).catch(() => {});
  const url = oidc.buildEndSessionUrl(c, {
    id_token_hint: session.data.idToken,
    post_logout_redirect_uri: signedOutUri,
  });
  redirect(res, url.href);
}

function home(res, data) {
  const { user } = data;
  const message = data.flash;
  data.flash = undefined;
  page(
    res,
    200,
    'Notes',
    `${message ? `<p role="status">${html(message)}</p>` : ''}
<p>Signed in as <strong>${html(user.email ?? user.sub)}</strong>${user.name ? ` (${html(user.name)})` : ''}.</p>
<p><a href="/notes">Show my notes</a></p>
<form method="post" action="/refresh"><button>Refresh tokens</button></form>
<form method="post" action="/logout"><button>Sign out</button></form>`,
  );
}

const server = createServer(async (req, res) => {
  const path = new URL(req.url, appUrl).pathname;
  const session = sessionOf(req);
  const user = session?.data.user;
  try {
    // A POST from any other origin is refused (with SameSite=Lax it carries no session anyway).
    if (req.method === 'POST' && req.headers.origin !== appUrl.origin) return page(res, 403, 'Forbidden', '');
    if (req.method === 'GET' && path === '/') return user ? home(res, session.data) : redirect(res, '/login');
    if (req.method === 'GET' && path === '/login') return await signIn(res);
    if (req.method === 'GET' && path === '/callback') return await callback(req, res, session);
    if (req.method === 'GET' && path === '/signed-out') {
      return page(res, 200, 'Signed out', '<p><a href="/login">Sign in with Gatehouse</a></p>');
    }
    if (req.method === 'POST' && path === '/logout') return await signOut(res, session);
    if (!user) return redirect(res, '/login');
    if (req.method === 'GET' && path === '/notes') return await notes(res, session.data);
    if (req.method === 'POST' && path === '/refresh') {
      await refresh(session.data);
      session.data.flash = `Tokens refreshed (${session.data.refreshes} so far).`;
      return redirect(res, '/');
    }
    page(res, 404, 'Not found', '');
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    page(res, 500, 'Something went wrong', '<p><a href="/">Back</a></p>');
  }
});

const port = Number(process.env.PORT ?? 3004);
server.listen(port, '127.0.0.1', () => console.log(`web app listening on http://127.0.0.1:${port}/`));
