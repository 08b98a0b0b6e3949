import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JSONWebKeySet,
  type JWK,
  SignJWT,
} from 'jose';
import Provider, { type Account, type Configuration } from 'oidc-provider';
import { type CodeFlowResult, runCodeFlow } from './oidc-browser.ts';

export interface OidcAccount {
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface OidcProviderOptions {
  /** Fixed port; default: an ephemeral one chosen by the OS. */
  port?: number;
  clientId?: string;
  /** Account id (becomes the ID token's `sub`) → claims. */
  accounts?: Record<string, OidcAccount>;
  /** ID token lifetime in seconds (default 3600). */
  idTokenTtlS?: number;
  /** Extra redirect URIs of the client (a relying party under test, e.g. Gatehouse's callback). */
  redirectUris?: string[];
  /** Makes the client confidential (client_secret_post) instead of public (PKCE only). */
  clientSecret?: string;
  /**
   * Leaves oidc-provider's `conformIdTokenClaims` at its default (true): an ID token that comes with
   * an access token carries `sub` only, and `email`/`profile` claims are served by userinfo alone
   * (OIDC Core 5.4). By default the harness puts them in the ID token too.
   */
  conformIdTokenClaims?: boolean;
}

export interface SignInOptions {
  nonce?: string;
  /** Requested scope (default `openid email profile`). */
  scope?: string;
}

export type SignInResult = CodeFlowResult;

export interface OidcHarness {
  /** e.g. `http://127.0.0.1:41234` (no trailing slash), the exact `iss` of issued tokens. */
  readonly issuer: string;
  readonly clientId: string;
  readonly port: number;
  readonly redirectUri: string;
  readonly discoveryUrl: string;
  /** Provider notices, warnings and error events, routed here instead of the console. */
  readonly logs: readonly string[];
  /** Runs the authorization-code + PKCE flow through the provider's login and consent forms. */
  signIn(accountId: string, opts?: SignInOptions): Promise<SignInResult>;
  /** The key set the provider publishes at its jwks_uri (fetched live). */
  jwks(): Promise<JSONWebKeySet>;
  /** Private JWK (with `kid`, `alg`) of the provider's current signing key. */
  privateSigningJwk(): JWK;
  /** Signs a token with the provider's key: valid ID token claims (default `sub`: the first account) merged with `overrides`; an `undefined` override removes that claim. */
  craftIdToken(overrides?: Record<string, unknown>, header?: { kid?: string }): Promise<string>;
  /** Adds or replaces an account (takes effect on the next sign-in). */
  setAccount(accountId: string, account: OidcAccount): void;
  /** Replaces the signing key (new `kid`) without changing the port; `keepOld` keeps publishing the old key. */
  rotateSigningKey(opts?: { keepOld?: boolean }): Promise<void>;
  /** Closes the server and its connections; idempotent. */
  stop(): Promise<void>;
  /** Starts a fresh provider on the same port with the same keys, client and accounts. */
  restart(): Promise<void>;
}

/** Default accounts: one with a verified email, one without. */
export const DEFAULT_OIDC_ACCOUNTS: Readonly<Record<string, OidcAccount>> = {
  alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Example' },
  bob: { email: 'bob@example.com', email_verified: false, name: 'Bob Example' },
};

const LOOPBACK = '127.0.0.1';
const PROVIDER_NOTICE = /oidc-provider (?:WARNING|NOTICE):/;
const ERROR_EVENTS = [
  'server_error',
  'authorization.error',
  'grant.error',
  'discovery.error',
  'jwks.error',
  'userinfo.error',
  'end_session.error',
  'interaction.error',
];

/** Starts a real oidc-provider on loopback with one public (PKCE) client and in-test signing keys. */
export async function startOidcProvider(opts: OidcProviderOptions = {}): Promise<OidcHarness> {
  const clientId = opts.clientId ?? 'gatehouse-test';
  const redirectUri = `http://${LOOPBACK}/callback`;
  const idTokenTtlS = opts.idTokenTtlS ?? 3600;
  const accounts = new Map(Object.entries(opts.accounts ?? DEFAULT_OIDC_ACCOUNTS));
  const logs: string[] = [];
  const log = (line: string): void => {
    logs.push(line);
    if (process.env.OIDC_HARNESS_DEBUG) process.stderr.write(`[oidc-harness] ${line}\n`);
  };

  let signingKeys: JWK[] = [await newSigningJwk()];
  let server: Server | undefined;
  let handler: ReturnType<Provider['callback']> | undefined;

  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    if (handler) void handler(req, res);
    else res.writeHead(503).end();
  };

  server = await listen(opts.port ?? 0, serve);
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://${LOOPBACK}:${port}`;

  const buildProvider = (): void => {
    const provider = withRoutedConsole(log, () => new Provider(issuer, configuration()));
    for (const event of ERROR_EVENTS) {
      provider.on(event, (_ctx, err) => log(`${event}: ${describeError(err)}`));
    }
    // Koa prints unhandled errors to stderr unless someone listens for them.
    provider.on('error', (err) => log(`koa error: ${describeError(err)}`));
    handler = provider.callback();
  };

  const configuration = (): Configuration => ({
    clients: [
      {
        client_id: clientId,
        redirect_uris: [redirectUri, ...(opts.redirectUris ?? [])],
        post_logout_redirect_uris: [`http://${LOOPBACK}/signed-out`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        ...(opts.clientSecret
          ? { client_secret: opts.clientSecret, token_endpoint_auth_method: 'client_secret_post' as const }
          : { token_endpoint_auth_method: 'none' as const }),
      },
    ],
    // The provider mutates the JWKs it is given; hand it copies.
    jwks: { keys: signingKeys.map((jwk) => structuredClone(jwk)) },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    scopes: ['openid', 'email', 'profile'],
    // Default (true) would keep scope claims out of the ID token whenever an access token is issued.
    ...(opts.conformIdTokenClaims ? {} : { conformIdTokenClaims: false }),
    findAccount: (_ctx, sub) => findAccount(accounts, sub),
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    // Explicit TTLs also avoid the provider's "default ttl function called" notices.
    ttl: {
      IdToken: idTokenTtlS,
      AccessToken: 600,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 600,
      Grant: 600,
      RefreshToken: 600,
    },
    clientBasedCORS: () => true,
    renderError: (ctx, out) => {
      ctx.type = 'text/plain';
      ctx.body = Object.entries(out)
        .map(([key, value]) => `${key}: ${value}`)
        .join('\n');
    },
  });

  buildProvider();

  const stop = async (): Promise<void> => {
    const current = server;
    server = undefined;
    if (!current) return;
    await new Promise<void>((resolve) => {
      current.close(() => resolve());
      current.closeAllConnections();
    });
  };

  const harness: OidcHarness = {
    issuer,
    clientId,
    port,
    redirectUri,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    logs,
    signIn: async (accountId, signInOpts = {}) => {
      if (!accounts.has(accountId)) throw new Error(`oidc harness: unknown account "${accountId}"`);
      return runCodeFlow({
        issuer,
        clientId,
        redirectUri,
        accountId,
        ...(opts.clientSecret !== undefined && { clientSecret: opts.clientSecret }),
        ...signInOpts,
      });
    },
    jwks: async () => {
      const res = await fetch(`${issuer}/jwks`);
      if (!res.ok) throw new Error(`oidc harness: jwks returned ${res.status}`);
      return (await res.json()) as JSONWebKeySet;
    },
    privateSigningJwk: () => structuredClone(signingKeys[0]!),
    craftIdToken: async (overrides = {}, header = {}) => {
      const jwk = signingKeys[0]!;
      const now = Math.floor(Date.now() / 1000);
      const sub =
        typeof overrides.sub === 'string' ? overrides.sub : (accounts.keys().next().value ?? 'alice');
      const account = accounts.get(sub);
      const payload: Record<string, unknown> = {
        iss: issuer,
        aud: clientId,
        sub,
        iat: now,
        exp: now + idTokenTtlS,
        ...(account && { email: account.email, email_verified: account.email_verified, name: account.name }),
        ...overrides,
      };
      for (const [key, value] of Object.entries(payload)) if (value === undefined) delete payload[key];
      return new SignJWT(payload)
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: header.kid ?? jwk.kid })
        .sign(await importJWK(jwk, 'RS256'));
    },
    setAccount: (accountId, account) => {
      accounts.set(accountId, account);
    },
    rotateSigningKey: async ({ keepOld = false } = {}) => {
      const fresh = await newSigningJwk();
      signingKeys = keepOld ? [fresh, ...signingKeys] : [fresh];
      buildProvider();
    },
    stop,
    restart: async () => {
      await stop();
      buildProvider();
      server = await listen(port, serve);
    },
  };
  return harness;
}

function findAccount(accounts: Map<string, OidcAccount>, sub: string): Account | undefined {
  if (!accounts.has(sub)) return undefined;
  return {
    accountId: sub,
    // Read at claim time so setAccount() changes show up in later tokens.
    claims: () => ({ sub, ...accounts.get(sub) }),
  };
}

async function newSigningJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: 'RS256', use: 'sig' };
}

async function listen(
  port: number,
  onRequest: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Server> {
  // A just-released port can briefly be reported busy; retry a few times before giving up.
  for (let attempt = 0; ; attempt++) {
    // Idle keep-alive connections stay open longer than a test can block its event loop (building an
    // app runs migrations synchronously on SQLite): Node's 5 s default closed them meanwhile, and the
    // next request on a pooled connection (the harness's or Gatehouse's own fetch) failed with
    // ECONNRESET. stop() closes every connection anyway.
    const server = createServer(onRequest);
    server.keepAliveTimeout = 60_000;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, LOOPBACK, () => {
          server.off('error', reject);
          resolve();
        });
      });
      return server;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw err;
      await sleep(25);
    }
  }
}

function withRoutedConsole<T>(log: (line: string) => void, fn: () => T): T {
  const { warn, info } = console;
  const route =
    (original: (...args: unknown[]) => void) =>
    (...args: unknown[]): void => {
      const [first] = args;
      if (typeof first === 'string' && PROVIDER_NOTICE.test(first)) {
        log(stripAnsi(first));
      } else original.apply(console, args);
    };
  console.warn = route(warn);
  console.info = route(info);
  try {
    return fn();
  } finally {
    console.warn = warn;
    console.info = info;
  }
}

function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing the provider's TTY colour codes
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const detail = (err as Error & { error_description?: string }).error_description;
    return detail ? `${err.message} (${detail})` : err.message;
  }
  return String(err);
}
