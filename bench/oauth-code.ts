// OAuth refresh tokens for the sizing run's `grant_type=refresh_token` chains (bench/sizing.ts),
// obtained without a browser: the authorization code flow with PKCE by openid-client, the hosted
// page's calls (/account/authorize/<uid>/details, then /login or /consent with the account's
// Gatehouse access token, as web/authorize.js makes them) over plain HTTP with a cookie jar. The
// client is first party with the refresh_token grant, so every code exchange answers a refresh
// token and no consent page is shown (docs/api.md §17).
import * as oidc from 'openid-client';
import type { Server } from './run-servers.ts';

const REDIRECT = 'http://127.0.0.1:9/cb';

export interface CodeClient {
  basic: string;
  config: oidc.Configuration;
}

/** Registers the first-party client the chains refresh for. */
export async function codeClient(s: Server, scopes: string[] = ['openid', 'email']): Promise<CodeClient> {
  const res = await fetch(`${s.base}/api/v1/clients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
    body: JSON.stringify({
      name: 'Sizing app',
      application_type: 'native',
      first_party: true,
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes,
    }),
  });
  if (res.status !== 201) throw new Error(`client registration answered ${res.status}`);
  const made = (await res.json()) as { client_id: string; client_secret: string };
  const config = await oidc.discovery(new URL(s.base), made.client_id, made.client_secret, undefined, {
    execute: [oidc.allowInsecureRequests],
  });
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(made.client_id)}:${encodeURIComponent(made.client_secret)}`).toString('base64')}`;
  return { basic, config };
}

/** One browser: a cookie jar, redirects not followed. */
function browser(origin: string) {
  const jar = new Map<string, string>();
  return async (url: string, init: RequestInit = {}) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(new URL(url, origin), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
    });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? '';
      const at = pair.indexOf('=');
      if (pair.slice(at + 1) === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(pair.slice(0, at));
      else jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return res;
  };
}

/** One sign-in into the application by the account holding `access`: its refresh token. */
async function signIn(
  s: Server,
  c: CodeClient,
  access: string,
  extra: Record<string, string> = {},
): Promise<string> {
  const go = browser(s.base);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(c.config, {
    redirect_uri: REDIRECT,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  });
  let res = await go(url.href);
  for (let hop = 0; hop < 8; hop++) {
    const location = res.headers.get('location');
    if (!location) throw new Error(`code flow: no redirect (status ${res.status})`);
    if (location.startsWith(REDIRECT)) {
      const tokens = await oidc.authorizationCodeGrant(c.config, new URL(location), {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
      if (!tokens.refresh_token) throw new Error('code exchange answered no refresh token');
      return tokens.refresh_token;
    }
    const uid = /\/account\/authorize\/([^/?]+)$/.exec(new URL(location, s.base).pathname)?.[1];
    if (!uid) {
      res = await go(location);
      continue;
    }
    const details = (await (await go(`/account/authorize/${uid}/details`)).json()) as { prompt: string };
    const step = await go(`/account/authorize/${uid}/${details.prompt}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
      body: details.prompt === 'consent' ? JSON.stringify({ allow: true }) : '{}',
    });
    if (step.status !== 200) throw new Error(`/account/authorize ${details.prompt} answered ${step.status}`);
    res = await go(((await step.json()) as { redirect_to: string }).redirect_to);
  }
  throw new Error('code flow: too many redirects');
}

/** `n` independent refresh tokens (one grant each), for `n` chains. */
export async function oauthRefreshTokens(
  s: Server,
  c: CodeClient,
  n: number,
  /** More authorization parameters (an organization token's `scope` and `organization`). */
  extra: Record<string, string> = {},
): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await signIn(s, c, s.token as string, extra));
  return out;
}
