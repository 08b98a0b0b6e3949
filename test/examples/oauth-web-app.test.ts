import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  type Stack,
  skipWithoutChromium,
  startStack,
} from '../browser/harness.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { freePort } from '../support/service-process.ts';

/*
 * "Sign in with Gatehouse" end to end (docs/oauth.md, docs/api.md §17): the example web application
 * (examples/oauth-web-app, openid-client) and its API (examples/oauth-api, jose) as their own
 * processes, a real Gatehouse process (API_FORM=full) on each dialect, and Chromium driving a person
 * through sign-in, consent, the API call, a refresh and RP-initiated logout. Then the confused
 * deputy: a token minted for another API is refused by the example API and by Gatehouse's /api/v1.
 *
 * Web clients' redirect URIs must be https (docs/api.md §17), so the browser reaches the application
 * at https://app.example.test through a TLS proxy in front of its loopback port (startTlsProxy).
 */

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const APP_HOST = 'app.example.test';
const APP = `https://${APP_HOST}`;
const NOTES_API = 'https://notes.example.test/';
const BILLING_API = 'https://billing.example.test/';

function ensureInstalled(name: string): void {
  const dir = join(EXAMPLES, name);
  if (existsSync(join(dir, 'node_modules'))) return;
  if (process.env.CI === 'true') {
    throw new Error(
      `examples/${name} has no node_modules: .ci/run must install it (npm ci --prefix examples/${name})`,
    );
  }
  execFileSync('npm', ['ci', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: 'ignore' });
}

/** Starts examples/<name>/server.js with exactly `env` (plus PATH and PORT); resolves once it listens. */
async function startExample(name: string, env: Record<string, string>, probe: string) {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['server.js'], {
    cwd: join(EXAMPLES, name),
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`examples/${name} exited:\n${out}`);
    try {
      await fetch(`${url}${probe}`, { redirect: 'manual' });
      return { child, url };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`examples/${name} did not listen:\n${out}`);
}

/**
 * The TLS proxy in front of the application: an https server on loopback with a throwaway
 * self-signed certificate (made by openssl for this run) that forwards every request to the
 * application's plain-http port, as a production reverse proxy would. Chromium reaches it through
 * `--host-resolver-rules` and accepts the certificate because the context ignores HTTPS errors.
 */
async function startTlsProxy(port: number, target: string, dir: string): Promise<Server> {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  try {
    execFileSync(
      'openssl',
      // biome-ignore format: one openssl option per line would hide the command
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
        '-subj', `/CN=${APP_HOST}`, '-addext', `subjectAltName=DNS:${APP_HOST}`, '-keyout', key, '-out', cert],
      { stdio: 'ignore' },
    );
  } catch (err) {
    throw new Error("the openssl command makes the TLS proxy's certificate: install openssl", { cause: err });
  }
  const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const upstream = httpRequest(
      `${target}${req.url ?? '/'}`,
      { method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

for (const dialect of DIALECTS) {
  describe(`examples/oauth-web-app signs in with Gatehouse in Chromium (${dialect})`, {
    skip: skipWithoutChromium,
  }, () => {
    let db: TestDatabase;
    let stack: Stack;
    let api: Awaited<ReturnType<typeof startExample>>;
    let app: Awaited<ReturnType<typeof startExample>>;
    let worker: oidc.Configuration;
    let indexer: oidc.Configuration;
    let pinger: oidc.Configuration;
    let proxy: Server;
    let certDir: string;

    const created = async (path: string, body: Record<string, unknown>) => {
      const res = await stack.adminApi('POST', path, body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body as { client_id: string; client_secret: string };
    };

    before(async () => {
      ensureInstalled('oauth-web-app');
      ensureInstalled('oauth-api');
      db = await createTestDatabase(dialect);
      const proxyPort = await freePort();
      stack = await startStack(
        { DATABASE_URL: db.url },
        { browserArgs: [`--host-resolver-rules=MAP ${APP_HOST} 127.0.0.1:${proxyPort}`] },
      );
      // Two APIs, the web application and a program allowed only the Billing API (docs/oauth.md).
      await created('/api/v1/resources', {
        identifier: NOTES_API,
        name: 'Notes API',
        scopes: [{ name: 'read:notes', description: 'Read your notes' }],
      });
      await created('/api/v1/resources', {
        identifier: BILLING_API,
        name: 'Billing API',
        scopes: [{ name: 'read:invoices', description: 'Read your invoices' }],
      });
      const webApp = await created('/api/v1/clients', {
        name: 'Notes web app',
        redirect_uris: [`${APP}/callback`],
        post_logout_redirect_uris: [`${APP}/signed-out`],
        scopes: ['openid', 'email', 'profile', 'offline_access', 'read:notes'],
        resources: [NOTES_API],
      });
      const billingWorker = await created('/api/v1/clients', {
        name: 'Billing worker',
        grant_types: ['client_credentials'],
        scopes: ['read:invoices'],
        resources: [BILLING_API],
      });
      // Programs calling the Notes API as themselves: one with its scope, one without.
      const notesIndexer = await created('/api/v1/clients', {
        name: 'Notes indexer',
        grant_types: ['client_credentials'],
        scopes: ['read:notes'],
        resources: [NOTES_API],
      });
      const notesPinger = await created('/api/v1/clients', {
        name: 'Notes pinger',
        grant_types: ['client_credentials'],
        scopes: [],
        resources: [NOTES_API],
      });
      const rp = (c: { client_id: string; client_secret: string }) =>
        oidc.discovery(new URL(stack.origin), c.client_id, c.client_secret, undefined, {
          execute: [oidc.allowInsecureRequests],
        });
      worker = await rp(billingWorker);
      indexer = await rp(notesIndexer);
      pinger = await rp(notesPinger);
      api = await startExample(
        'oauth-api',
        { GATEHOUSE_URL: stack.origin, API_RESOURCE: NOTES_API, API_SCOPE: 'read:notes' },
        '/notes',
      );
      app = await startExample(
        'oauth-web-app',
        {
          GATEHOUSE_URL: stack.origin,
          CLIENT_ID: webApp.client_id,
          CLIENT_SECRET: webApp.client_secret,
          APP_URL: APP,
          API_URL: api.url,
          API_RESOURCE: NOTES_API,
          API_SCOPE: 'read:notes',
        },
        '/signed-out',
      );
      certDir = mkdtempSync(join(tmpdir(), 'gatehouse-example-tls-'));
      proxy = await startTlsProxy(proxyPort, app.url, certDir);
    });
    after(async () => {
      proxy?.closeAllConnections();
      proxy?.close();
      if (certDir) rmSync(certDir, { recursive: true, force: true });
      app?.child.kill('SIGTERM');
      api?.child.kill('SIGTERM');
      await stack?.close();
      await db?.drop();
    });

    it('sign-in, consent, the API call, a refresh and logout through the hosted pages; other tokens refused', async () => {
      const context = await stack.browser.newContext({ serviceWorkers: 'block', ignoreHTTPSErrors: true });
      const page: Page = await context.newPage();

      // Open the application: it sends the browser to Gatehouse's hosted sign-in.
      await page.goto(`${APP}/`);
      await page.waitForURL(`${stack.origin}/account/sign-in?next=**`);
      await page.getByLabel('E-mail address').fill(ADMIN_EMAIL);
      await page.getByLabel('Password', { exact: true }).fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();

      // Consent names the application, the API's scope and the refresh token in plain words.
      await page.getByRole('heading', { name: /Notes web app asks for access/ }).waitFor();
      await page.getByText('Read your notes').waitFor();
      await page.getByText('Keep access while you are not using it').waitFor();
      await page.getByRole('button', { name: 'Allow' }).click();

      // Back in the application, which shows who signed in (from the ID token).
      await page.waitForURL(`${APP}/`);
      await page.getByText(`Signed in as ${ADMIN_EMAIL}`).waitFor();
      const me = await stack.adminApi('GET', '/api/v1/profile');
      const sub = (me.body as { id: string }).id;
      assert.ok(sub);

      // The application calls its API with the token Gatehouse minted for that API.
      await page.getByRole('link', { name: 'Show my notes' }).click();
      await page.getByText(`Notes kept for ${sub}`).waitFor();
      await page.getByRole('link', { name: 'Back' }).click();

      // Two refreshes: the second works only if the first's rotated refresh token was kept (a
      // rotated one, presented again, revokes the grant). The API still answers afterwards.
      await page.getByRole('button', { name: 'Refresh tokens' }).click();
      await page.getByText('Tokens refreshed (1 so far).').waitFor();
      await page.getByRole('button', { name: 'Refresh tokens' }).click();
      await page.getByText('Tokens refreshed (2 so far).').waitFor();
      await page.getByRole('link', { name: 'Show my notes' }).click();
      await page.getByText(`Notes kept for ${sub}`).waitFor();
      await page.getByRole('link', { name: 'Back' }).click();

      // The confused deputy: a valid Gatehouse token minted for the Billing API is refused by the
      // notes API (its audience is not the notes API) and by Gatehouse's own /api/v1.
      const billing = await oidc.clientCredentialsGrant(worker, {
        scope: 'read:invoices',
        resource: BILLING_API,
      });
      const forBilling = { authorization: `Bearer ${billing.access_token}` };
      const atApi = await fetch(`${api.url}/notes`, { headers: forBilling });
      assert.equal(atApi.status, 401, 'the example API must refuse a token for another audience');
      assert.equal(((await atApi.json()) as { detail: string }).detail, 'ERR_JWT_CLAIM_VALIDATION_FAILED');
      const atGatehouse = await fetch(`${stack.origin}/api/v1/profile`, { headers: forBilling });
      assert.equal(atGatehouse.status, 401);
      assert.equal(((await atGatehouse.json()) as { code: string }).code, 'token_invalid');
      assert.equal((await fetch(`${api.url}/notes`)).status, 401, 'no token');
      // …and the other way round: a token minted for the Notes API opens it (the refusals above are
      // about the audience, not the grant) but not Gatehouse's /api/v1; without its scope, 403.
      const notes = await oidc.clientCredentialsGrant(indexer, { scope: 'read:notes', resource: NOTES_API });
      const forNotes = { authorization: `Bearer ${notes.access_token}` };
      assert.equal((await fetch(`${api.url}/notes`, { headers: forNotes })).status, 200);
      const notesAtGatehouse = await fetch(`${stack.origin}/api/v1/profile`, { headers: forNotes });
      assert.equal(notesAtGatehouse.status, 401);
      assert.equal(((await notesAtGatehouse.json()) as { code: string }).code, 'token_invalid');
      const unscoped = await oidc.clientCredentialsGrant(pinger, { resource: NOTES_API });
      const noScope = await fetch(`${api.url}/notes`, {
        headers: { authorization: `Bearer ${unscoped.access_token}` },
      });
      assert.equal(noScope.status, 403);
      assert.match(noScope.headers.get('www-authenticate') ?? '', /insufficient_scope/);

      // RP-initiated logout: Gatehouse's confirmation page, then the application's signed-out page.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.waitForURL(`${APP}/signed-out`);
      await page.getByRole('heading', { name: 'Signed out' }).waitFor();
      // The application's session is over: it sends the browser back to Gatehouse to sign in again,
      // and Gatehouse's own session ended with the logout too (docs/api.md §17): the sign-in form.
      await page.goto(`${APP}/`);
      await page.waitForURL(`${stack.origin}/account/**`);
      await page.waitForURL(/\/account\/sign-in\?next=/);
      await page.getByLabel('E-mail address').waitFor();
      await context.close();
    });
  });
}
