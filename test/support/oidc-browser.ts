import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt, type JWTPayload } from 'jose';

// Just enough "browser" (cookies, HTML forms) to walk oidc-provider's development interaction pages
// with plain fetch. Single host (loopback), so cookie domains are ignored.

interface StoredCookie {
  name: string;
  value: string;
  path: string;
}

export interface CookieJar {
  store(url: URL, setCookieHeaders: string[]): void;
  header(url: URL): string | undefined;
}

/** A cookie jar for one host that honours Path, Max-Age and Expires (deletions). */
export function createCookieJar(): CookieJar {
  const cookies = new Map<string, StoredCookie>();
  return {
    store(url, setCookieHeaders) {
      for (const line of setCookieHeaders) {
        const [pair = '', ...attributes] = line.split(';');
        const eq = pair.indexOf('=');
        if (eq < 1) continue;
        const name = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        let path = defaultPath(url);
        let expired = value === '';
        for (const attribute of attributes) {
          const sep = attribute.indexOf('=');
          const key = (sep === -1 ? attribute : attribute.slice(0, sep)).trim().toLowerCase();
          const attrValue = sep === -1 ? '' : attribute.slice(sep + 1).trim();
          if (key === 'path' && attrValue.startsWith('/')) path = attrValue;
          if (key === 'max-age' && Number(attrValue) <= 0) expired = true;
          if (key === 'expires' && Date.parse(attrValue) <= Date.now()) expired = true;
        }
        const id = `${name};${path}`;
        if (expired) cookies.delete(id);
        else cookies.set(id, { name, value, path });
      }
    },
    header(url) {
      const matching = [...cookies.values()].filter((cookie) => pathMatches(url.pathname, cookie.path));
      // RFC 6265 5.4: longer paths first.
      matching.sort((a, b) => b.path.length - a.path.length);
      return matching.length ? matching.map((c) => `${c.name}=${c.value}`).join('; ') : undefined;
    },
  };
}

function defaultPath(url: URL): string {
  const last = url.pathname.lastIndexOf('/');
  return last <= 0 ? '/' : url.pathname.slice(0, last);
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

export interface HtmlForm {
  action: string;
  method: string;
  /** Named inputs with their initial values, in document order. */
  fields: Map<string, string>;
}

/** Extracts the first POST form of a page (action, method, named inputs). */
export function parseHtmlForm(html: string): HtmlForm {
  const match = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!match) throw new Error(`no form in page: ${html.slice(0, 200)}`);
  const formAttributes = parseAttributes(match[1] ?? '');
  const fields = new Map<string, string>();
  for (const input of (match[2] ?? '').matchAll(/<input\b([^>]*)>/gi)) {
    const attributes = parseAttributes(input[1] ?? '');
    const name = attributes.get('name');
    if (name) fields.set(name, attributes.get('value') ?? '');
  }
  const action = formAttributes.get('action');
  if (!action) throw new Error('form without action');
  return { action, method: (formAttributes.get('method') ?? 'get').toLowerCase(), fields };
}

function parseAttributes(source: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const [, name = '', doubleQuoted, singleQuoted, bare] of source.matchAll(
    /([^\s"'=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g,
  )) {
    attributes.set(name.toLowerCase(), decodeEntities(doubleQuoted ?? singleQuoted ?? bare ?? ''));
  }
  return attributes;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|#39);/g, (_, entity: string) => ENTITIES[entity] ?? '');
}

const DEFAULT_SCOPE = 'openid email profile';

export interface CodeFlowResult {
  idToken: string;
  /** The access token of the same answer (for the provider's userinfo). */
  accessToken: string;
  nonce: string;
  /** The ID token's payload, decoded without verification. */
  claims: JWTPayload;
}

export interface CodeFlowInput {
  issuer: string;
  clientId: string;
  redirectUri: string;
  accountId: string;
  /** A confidential client's secret, sent with the code (client_secret_post). */
  clientSecret?: string;
  nonce?: string;
  scope?: string;
}

const MAX_STEPS = 12;

/** Authorization code + PKCE through the dev login and consent forms; returns the token endpoint's ID token. */
export async function runCodeFlow(input: CodeFlowInput): Promise<CodeFlowResult> {
  const { issuer, clientId, redirectUri, accountId } = input;
  const nonce = input.nonce ?? randomBytes(16).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const jar = createCookieJar();

  const authorize = new URL('/auth', issuer);
  authorize.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: input.scope ?? DEFAULT_SCOPE,
    nonce,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();

  let url = authorize;
  let res = await browse(jar, url);
  let code: string | undefined;
  for (let step = 0; code === undefined; step++) {
    if (step >= MAX_STEPS) throw new Error('oidc harness: too many steps in the sign-in flow');
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.get('location');
      if (!location) throw new Error(`oidc harness: ${res.status} without Location at ${url.pathname}`);
      url = new URL(location, url);
      if (`${url.origin}${url.pathname}` === redirectUri) {
        code = readAuthorizationResponse(url, state);
      } else {
        res = await browse(jar, url);
      }
    } else if (res.status === 200 && res.headers.get('content-type')?.startsWith('text/html')) {
      const form = parseHtmlForm(await res.text());
      if (form.method !== 'post')
        throw new Error(`oidc harness: unexpected ${form.method} form at ${url.pathname}`);
      // The dev login form accepts any login; the password field is required but ignored.
      const fields = form.fields;
      if (fields.has('login')) fields.set('login', accountId);
      if (fields.has('password')) fields.set('password', 'any-password');
      url = new URL(form.action, url);
      res = await browse(jar, url, new URLSearchParams([...fields]));
    } else {
      throw new Error(`oidc harness: unexpected ${res.status} at ${url.pathname}: ${await res.text()}`);
    }
  }

  const tokenRes = await fetch(new URL('/token', issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: clientId,
      ...(input.clientSecret !== undefined && { client_secret: input.clientSecret }),
    }),
  });
  const body = (await tokenRes.json()) as {
    id_token?: string;
    access_token?: string;
    error?: string;
    error_description?: string;
  };
  if (!tokenRes.ok || !body.id_token || !body.access_token) {
    throw new Error(
      `oidc harness: token endpoint ${tokenRes.status}: ${body.error} ${body.error_description}`,
    );
  }
  return { idToken: body.id_token, accessToken: body.access_token, nonce, claims: decodeJwt(body.id_token) };
}

async function browse(jar: CookieJar, url: URL, form?: URLSearchParams): Promise<Response> {
  const headers: Record<string, string> = { accept: 'text/html' };
  const cookie = jar.header(url);
  if (cookie) headers.cookie = cookie;
  const res = await fetch(url, {
    method: form ? 'POST' : 'GET',
    headers,
    body: form,
    redirect: 'manual',
  });
  jar.store(url, res.headers.getSetCookie());
  return res;
}

function readAuthorizationResponse(url: URL, expectedState: string): string {
  const params = url.searchParams;
  const error = params.get('error');
  if (error)
    throw new Error(`oidc harness: authorization failed: ${error} ${params.get('error_description')}`);
  if (params.get('state') !== expectedState) throw new Error('oidc harness: state mismatch in redirect');
  const code = params.get('code');
  if (!code) throw new Error('oidc harness: redirect without code');
  return code;
}

/**
 * Walks an authorization URL made by someone else (a relying party under test) through the dev login
 * and consent forms, and returns the URL the provider redirects to at `redirectPrefix` (code and
 * state in it), without following it.
 */
export async function authorizeAt(
  authorizationUrl: string,
  accountId: string,
  redirectPrefix: string,
): Promise<URL> {
  const jar = createCookieJar();
  let url = new URL(authorizationUrl);
  let res = await browse(jar, url);
  for (let step = 0; step < MAX_STEPS; step++) {
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.get('location');
      if (!location) throw new Error(`oidc harness: ${res.status} without Location at ${url.pathname}`);
      url = new URL(location, url);
      if (url.href.startsWith(redirectPrefix)) return url;
      res = await browse(jar, url);
    } else if (res.status === 200 && res.headers.get('content-type')?.startsWith('text/html')) {
      const form = parseHtmlForm(await res.text());
      const fields = form.fields;
      if (fields.has('login')) fields.set('login', accountId);
      if (fields.has('password')) fields.set('password', 'any-password');
      url = new URL(form.action, url);
      res = await browse(jar, url, new URLSearchParams([...fields]));
    } else {
      throw new Error(`oidc harness: unexpected ${res.status} at ${url.pathname}: ${await res.text()}`);
    }
  }
  throw new Error('oidc harness: too many steps in the sign-in flow');
}
