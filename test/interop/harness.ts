import assert from 'node:assert/strict';
import { createServer, type RequestListener } from 'node:http';
import { createTestDatabase, type TestDatabase, type TestDialect } from '../helpers/databases.ts';
import { type Browser, cookieBrowser } from '../support/cookie-browser.ts';
import { adminOver, loginOver } from '../support/service-api.ts';

export { freePort } from '../support/service-process.ts';

import { freePort, type ServiceProcess, startServiceProcess } from '../support/service-process.ts';

/*
 * The interop suite (docs/oauth.md, "Relying-party libraries"): each file drives one relying-party
 * library, as its own documentation says, against a started Gatehouse process (API_FORM=full) on a
 * fresh database. People sign in on the hosted pages: a user agent with one cookie jar per origin
 * follows every redirect between the application and Gatehouse, and answers the hosted sign-in
 * and consent with the page's own two calls (as test/oauth/code-flow.ts does), the logout
 * confirmation with its form, and a `form_post` answer with its form.
 */

export const PASSWORD = 'a long and unguessable passphrase 7';
const ADMIN_EMAIL = 'root@interop.test';
const ADMIN_PASSWORD = 'correct horse battery staple 42';

export interface Person {
  id: string;
  email: string;
  name: string;
  /** The Gatehouse session the hosted sign-in page posts (the page's own bearer token). */
  access: string;
}

export interface Registered {
  client_id: string;
  client_secret?: string;
}

export interface Gatehouse {
  /** `http://localhost:<port>`, the issuer. */
  origin: string;
  service: ServiceProcess;
  admin(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Registers a client (201 asserted). */
  client(body: Record<string, unknown>): Promise<Registered>;
  /** A new account with a name (for the `profile` scope) and its Gatehouse session. */
  person(): Promise<Person>;
  /** A new Gatehouse session (`POST /api/v1/login`): its access token. */
  login(email: string, password: string): Promise<string>;
  close(): Promise<void>;
}

export async function startGatehouse(dialect: TestDialect): Promise<Gatehouse> {
  const database: TestDatabase = await createTestDatabase(dialect);
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const service = await startServiceProcess(
    {
      PUBLIC_URL: origin,
      API_FORM: 'full',
      DATABASE_URL: database.url,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      LOG_LEVEL: 'warn',
      SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    },
    // Up to 90 s: the suite runs beside the others on a shared machine.
    900,
    port,
  ).catch(async (err: unknown) => {
    await database.drop();
    throw err;
  });
  const login = (email: string, password: string) => loginOver(origin, email, password);
  const admin = adminOver(origin, await login(ADMIN_EMAIL, ADMIN_PASSWORD));
  let people = 0;
  return {
    origin,
    service,
    admin,
    login,
    async client(body) {
      const made = await admin('POST', '/api/v1/clients', body);
      assert.equal(made.status, 201, JSON.stringify(made.body));
      return made.body as unknown as Registered;
    },
    async person() {
      people += 1;
      const email = `person${people}@interop.test`;
      const name = `Person ${people}`;
      const made = await admin('POST', '/api/v1/users', { email, password: PASSWORD, name });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      return { id: String(made.body.id), email, name, access: await login(email, PASSWORD) };
    },
    async close() {
      await service.stop();
      await database.drop();
    },
  };
}

/** Where a walk through redirects ended: the last URL asked for and its answer. */
export interface Landing {
  url: URL;
  res: Response;
  body: string;
}

export interface UserAgent {
  /** One request with the cookies of the URL's origin; redirects are not followed. */
  go(url: string | URL, init?: RequestInit): Promise<Response>;
  /**
   * Follows redirects from `url` across origins, through the hosted sign-in, consent, logout
   * confirmation and `form_post` pages, until an answer that is none of those (or `stop` says so).
   */
  walk(url: string | URL, init?: RequestInit, stop?: (url: URL) => boolean): Promise<Landing>;
  /** The hosted steps shown so far, in order (`login`, `consent`). */
  prompts: string[];
}

/** A person's browser over HTTP: a cookie jar per origin (test/support/cookie-browser.ts). */
export function userAgent(g: Gatehouse, p: Person): UserAgent {
  const jars = new Map<string, Browser>();
  const prompts: string[] = [];
  const go = (url: string | URL, init: RequestInit = {}) => {
    const target = new URL(url);
    let jar = jars.get(target.origin);
    if (jar === undefined) {
      jar = cookieBrowser(target.origin);
      jars.set(target.origin, jar);
    }
    return jar(target.href, init);
  };
  const walk = async (start: string | URL, first: RequestInit = {}, stop?: (url: URL) => boolean) => {
    let url = new URL(start);
    let init: RequestInit = first;
    for (let hop = 0; hop < 20; hop += 1) {
      const res = await go(url, init);
      init = {};
      const location = res.headers.get('location');
      if (location !== null && res.status >= 300 && res.status < 400) {
        const next = new URL(location, url);
        if (stop?.(next)) return { url: next, res, body: '' };
        const interaction = /^\/account\/authorize\/([^/?]+)$/.exec(next.pathname);
        if (next.origin === g.origin && interaction) {
          url = await hostedStep(go, g, p, interaction[1] as string, prompts);
        } else {
          url = next;
        }
        continue;
      }
      const body = await res.text();
      const form = postedForm(body, url);
      if (res.status === 200 && url.origin === g.origin && url.pathname === '/oauth2/logout' && form) {
        // Gatehouse's logout confirmation: the person clicks "Yes, sign me out".
        assert.match(body, /Yes, sign me out/);
        url = form.action;
        init = formPost({ ...form.fields, logout: 'yes' });
        continue;
      }
      if (form && form.action.origin !== g.origin && /<script/.test(body)) {
        // A self-submitting form to the application (response_mode=form_post).
        url = form.action;
        init = formPost(form.fields);
        continue;
      }
      return { url, res, body };
    }
    throw new Error('too many redirects');
  };
  return { go, walk, prompts };
}

/** The hosted page's calls for one interaction step (sign-in with the person's session, or consent: allow). */
async function hostedStep(
  go: UserAgent['go'],
  g: Gatehouse,
  p: Person,
  uid: string,
  prompts: string[],
): Promise<URL> {
  const details = await go(`${g.origin}/account/authorize/${uid}/details`);
  assert.equal(details.status, 200, await details.clone().text());
  const prompt = ((await details.json()) as { prompt: string }).prompt;
  prompts.push(prompt);
  const post = () =>
    go(`${g.origin}/account/authorize/${uid}/${prompt}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.access}`, 'content-type': 'application/json' },
      body: prompt === 'consent' ? JSON.stringify({ allow: true }) : '{}',
    });
  let step = await post();
  if (step.status === 401 && prompt === 'login') {
    // The person's Gatehouse session ended (a logout): the page signs in with the password again.
    p.access = await g.login(p.email, PASSWORD);
    step = await post();
  }
  assert.equal(step.status, 200, await step.clone().text());
  return new URL(((await step.json()) as { redirect_to: string }).redirect_to, g.origin);
}

function formPost(fields: Record<string, string>): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  };
}

const htmlText = (s: string) =>
  s
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');

/** The first `method="post"` form of a page: its action and hidden fields. */
function postedForm(html: string, base: URL): { action: URL; fields: Record<string, string> } | null {
  const form = /<form[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return null;
  const action = /action="([^"]*)"/.exec(form[0])?.[1];
  if (action === undefined) return null;
  const fields: Record<string, string> = {};
  for (const input of (form[1] ?? '').matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
    if (name !== undefined && /type="hidden"/i.test(input[0])) fields[htmlText(name)] = htmlText(value);
  }
  return { action: new URL(htmlText(action), base), fields };
}

/** Listens on 127.0.0.1 (a port from freePort); resolves with the app's origin and a closer. */
export async function listen(
  handler: RequestListener,
  port: number,
): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A confidential web application's registration for a relying party at `origin`: an `http`
 * loopback redirect URI (docs/api.md §17), first-party so every code exchange brings a refresh token.
 */
export function webClient(
  name: string,
  origin: string,
  callback: string,
  extra: Record<string, unknown> = {},
) {
  return {
    name,
    application_type: 'web',
    redirect_uris: [`${origin}${callback}`],
    post_logout_redirect_uris: [`${origin}/signed-out`],
    grant_types: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    first_party: true,
    ...extra,
  };
}
