import assert from 'node:assert/strict';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { createTestDatabase, type TestDatabase, type TestDialect } from '../../helpers/databases.ts';
import { type Browser, cookieBrowser } from '../../support/cookie-browser.ts';
import { adminOver, loginOver } from '../../support/service-api.ts';
import { freePort, type ServiceProcess, startServiceProcess } from '../../support/service-process.ts';

/*
 * The OpenID Foundation's OP test plans mirrored (docs/oauth.md, "OpenID conformance"): a started
 * Gatehouse process on a fresh database (one per test file and dialect), a relying party on
 * openid-client, and people signing in on the hosted pages over HTTP (a cookie jar and the page's
 * two calls, as test/oauth/code-flow.ts). PKCE S256 goes with every request (docs/api.md §17).
 */

/** The suite's callback: a web client's https redirect URI (never fetched: the test reads the redirect). */
export const REDIRECT = 'https://rp.conformance.test/cb';
export const PASSWORD = 'a long and unguessable passphrase 7';
const ADMIN_EMAIL = 'root@conformance.test';
const ADMIN_PASSWORD = 'correct horse battery staple 42';

export interface Person {
  id: string;
  email: string;
  /** The Gatehouse session of the browser's hosted sign-in (replaced when it signs in again). */
  access: string;
  go: Browser;
}

/** What one authorization request went through, and where it ended. */
export interface Authorization {
  /** The redirect to the client (code or error), or null when the OP stopped on a page of its own. */
  callback: URL | null;
  /** The OP's own answer when it did not redirect back (an error page). */
  page: Response | null;
  verifier: string;
  state: string;
  nonce: string | undefined;
  /** The hosted steps shown, in order (`login`, `consent`), and the sign-ins asked again. */
  prompts: string[];
  reauthenticated: number;
}

export async function startConformance(dialect: TestDialect) {
  const database: TestDatabase = await createTestDatabase(dialect);
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  let service: ServiceProcess;
  try {
    service = await startServiceProcess(
      {
        PUBLIC_URL: origin,
        API_FORM: 'full',
        DATABASE_URL: database.url,
        ADMIN_EMAIL,
        ADMIN_PASSWORD,
        LOG_LEVEL: 'warn',
        SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      },
      300,
      port,
    );
  } catch (err) {
    await database.drop();
    throw err;
  }
  const login = (email: string, password = PASSWORD) => loginOver(origin, email, password);
  const admin = adminOver(origin, await login(ADMIN_EMAIL, ADMIN_PASSWORD));
  const discovered = (await (await fetch(`${origin}/.well-known/openid-configuration`)).json()) as Record<
    string,
    unknown
  >;
  const jwks = jose.createRemoteJWKSet(new URL(String(discovered.jwks_uri)));

  /** A confidential web client of the plan (an ordinary, third-party client) and its relying party. */
  const client = async (name: string, extra: Record<string, unknown> = {}) => {
    const made = await admin('POST', '/api/v1/clients', {
      name,
      application_type: 'web',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      ...extra,
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const registered = made.body as {
      client_id: string;
      client_secret: string;
      token_endpoint_auth_method: string;
    };
    const auth =
      registered.token_endpoint_auth_method === 'client_secret_post'
        ? oidc.ClientSecretPost(registered.client_secret)
        : oidc.ClientSecretBasic(registered.client_secret);
    const rp = await oidc.discovery(new URL(origin), registered.client_id, undefined, auth, {
      execute: [oidc.allowInsecureRequests],
    });
    return { ...registered, rp };
  };
  type Client = Awaited<ReturnType<typeof client>>;

  let people = 0;
  /** A new account (with a name, for the profile scope), signed in on the hosted pages of a new browser. */
  const person = async (): Promise<Person> => {
    people += 1;
    const email = `person${people}@conformance.test`;
    const made = await admin('POST', '/api/v1/users', {
      email,
      password: PASSWORD,
      name: `Person ${people}`,
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return { id: String(made.body.id), email, access: await login(email), go: cookieBrowser(origin) };
  };

  /**
   * The authorization request through the hosted pages: a login step posts the person's session
   * (signing in again when the page asks for a fresh sign-in: prompt=login, max_age), a consent step
   * allows. Ends at the redirect to the client, or at a page of the OP's own.
   */
  const authorize = async (
    p: Person,
    c: Client,
    params: Record<string, string> = {},
    options: { method?: 'GET' | 'POST'; omit?: string[] } = {},
  ): Promise<Authorization> => {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = params.nonce;
    const all: Record<string, string> = {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...params,
    };
    for (const name of options.omit ?? []) delete all[name];
    const url = oidc.buildAuthorizationUrl(c.rp, all);
    if (options.omit?.includes('response_type')) url.searchParams.delete('response_type');
    let res =
      options.method === 'POST'
        ? await p.go(`${url.origin}${url.pathname}`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: url.searchParams.toString(),
          })
        : await p.go(url.href);
    const prompts: string[] = [];
    let reauthenticated = 0;
    const done = (callback: URL | null, page: Response | null): Authorization => ({
      callback,
      page,
      verifier,
      state,
      nonce,
      prompts,
      reauthenticated,
    });
    for (let hop = 0; hop < 8; hop += 1) {
      const location = res.headers.get('location');
      if (!location) return done(null, res);
      if (location.startsWith(REDIRECT)) return done(new URL(location), null);
      const interaction = /\/account\/authorize\/([^/?]+)$/.exec(new URL(location, origin).pathname);
      if (!interaction) {
        res = await p.go(location);
        continue;
      }
      const uid = interaction[1];
      const details = await p.go(`/account/authorize/${uid}/details`);
      const prompt = ((await details.json()) as { prompt: string }).prompt;
      prompts.push(prompt);
      const step = () =>
        p.go(`/account/authorize/${uid}/${prompt}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.access}`, 'content-type': 'application/json' },
          body: prompt === 'consent' ? JSON.stringify({ allow: true }) : '{}',
        });
      let answer = await step();
      if (answer.status === 401 && prompt === 'login') {
        const problem = (await answer.json()) as { code: string };
        assert.equal(problem.code, 'reauthentication_required');
        reauthenticated += 1;
        p.access = await login(p.email);
        answer = await step();
      }
      assert.equal(answer.status, 200, await answer.clone().text());
      res = await p.go(((await answer.json()) as { redirect_to: string }).redirect_to);
    }
    throw new Error('too many redirects');
  };

  /** The code exchange of a finished authorization (openid-client checks the ID token's claims). */
  const exchange = (c: Client, a: Authorization, checks: { maxAge?: number } = {}) => {
    assert.ok(a.callback, 'the OP redirected back');
    return oidc.authorizationCodeGrant(c.rp, a.callback, {
      pkceCodeVerifier: a.verifier,
      expectedState: a.state,
      // Without a nonce, openid-client requires the ID token to carry none.
      ...(a.nonce === undefined ? {} : { expectedNonce: a.nonce }),
      ...(checks.maxAge === undefined ? {} : { maxAge: checks.maxAge }),
    });
  };

  /** The ID token's signature, against the JWKS the discovery document names (RS256 by default). */
  const verifyIdToken = async (idToken: string, c: Client) => {
    const { payload, protectedHeader } = await jose.jwtVerify(idToken, jwks, {
      issuer: origin,
      audience: c.client_id,
    });
    return { payload, protectedHeader };
  };

  const close = async () => {
    await service.stop();
    await database.drop();
  };
  return {
    origin,
    service,
    discovered,
    admin,
    login,
    client,
    person,
    authorize,
    exchange,
    verifyIdToken,
    close,
  };
}

export type Conformance = Awaited<ReturnType<typeof startConformance>>;
export type ConformanceClient = Awaited<ReturnType<Conformance['client']>>;
