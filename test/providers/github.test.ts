import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

/** A GitHub user as the fake serves it: `/user` and `/user/emails` (GitHub's documented shapes). */
interface FakeUser {
  id: number;
  login: string;
  name: string | null;
  emails: Array<{ email: string; primary: boolean; verified: boolean; visibility: string | null }>;
}

/**
 * A server on 127.0.0.1 answering like github.com's OAuth app endpoints and REST API, as GitHub's
 * documentation shows them: `/login/oauth/authorize` (redirect with code and state),
 * `/login/oauth/access_token` (JSON when asked with Accept: application/json), `/user`,
 * `/user/emails`. It checks the client secret, the redirect URI and PKCE S256 like GitHub does.
 */
async function startFakeGithub(clientId: string, clientSecret: string) {
  const codes = new Map<string, { user: FakeUser; challenge: string; redirect: string }>();
  const tokens = new Map<string, FakeUser>();
  let next: FakeUser | null = null;
  const body = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (c) => {
        text += c;
      });
      req.on('end', () => resolve(text));
    });
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(value));
    if (url.pathname === '/login/oauth/authorize') {
      if (url.searchParams.get('client_id') !== clientId || !next) return json(400, { error: 'bad client' });
      const code = `code-${Math.random().toString(36).slice(2)}`;
      codes.set(code, {
        user: next,
        challenge: url.searchParams.get('code_challenge') ?? '',
        redirect: url.searchParams.get('redirect_uri') ?? '',
      });
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      return res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      const form = new URLSearchParams(await body(req));
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const { createHash } = await import('node:crypto');
      const challenge = createHash('sha256')
        .update(form.get('code_verifier') ?? '')
        .digest('base64url');
      if (
        !grant ||
        form.get('client_id') !== clientId ||
        form.get('client_secret') !== clientSecret ||
        form.get('redirect_uri') !== grant.redirect ||
        challenge !== grant.challenge
      ) {
        return json(200, {
          error: 'bad_verification_code',
          error_description: 'The code passed is incorrect or expired.',
        });
      }
      const token = `gho_${Math.random().toString(36).slice(2)}`;
      tokens.set(token, grant.user);
      return json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const auth = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const user = auth ? tokens.get(auth) : undefined;
    if (!user) return json(401, { message: 'Requires authentication' });
    if (url.pathname === '/user') {
      return json(200, { login: user.login, id: user.id, type: 'User', name: user.name, email: null });
    }
    if (url.pathname === '/user/emails') return json(200, user.emails);
    return json(404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    signInAs(user: FakeUser) {
      next = user;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function setCookie(res: LightMyRequestResponse, name: string): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const line = lines.find((l) => l.startsWith(`${name}=`));
  return line === undefined ? undefined : line.slice(name.length + 1).split(';')[0];
}

for (const dialect of DIALECTS) {
  describe(`providers: the github kind against a local server serving GitHub's documented answers [${dialect}]`, () => {
    let gh: Awaited<ReturnType<typeof startFakeGithub>>;
    let t: TestApp;

    before(async () => {
      gh = await startFakeGithub('Iv1.test', 'gh-secret');
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      const admin = await authHeaders(t, await firstAdmin(t));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/providers',
        headers: admin,
        payload: {
          name: 'github',
          preset: 'github',
          issuer: gh.origin,
          api_url: gh.origin,
          client_id: 'Iv1.test',
          client_secret: 'gh-secret',
        },
      });
      assert.equal(res.statusCode, 201, res.body);
    });
    after(async () => {
      await t?.destroy();
      await gh?.stop();
    });

    async function signIn(user: FakeUser) {
      gh.signInAs(user);
      const start = await t.app.inject({ url: '/api/v1/idp/github/start' });
      assert.equal(start.statusCode, 302, start.body);
      const to = new URL(String(start.headers.location));
      assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(to.searchParams.get('scope'), 'read:user user:email');
      const back = await fetch(to, { redirect: 'manual' });
      const callback = new URL(String(back.headers.get('location')));
      assert.equal(`${callback.origin}${callback.pathname}`, `${PUBLIC_URL}/api/v1/idp/github/callback`);
      return t.app.inject({
        url: `${callback.pathname}${callback.search}`,
        headers: { cookie: `gatehouse_idp_flow=${setCookie(start, 'gatehouse_idp_flow')}` },
      });
    }

    it('identity = (issuer, numeric id); provisioned from the verified primary address, found again after a rename', async () => {
      const octo: FakeUser = {
        id: 583231,
        login: 'octocat',
        name: 'The Octocat',
        emails: [
          { email: 'octo-secondary@example.com', primary: false, verified: true, visibility: null },
          { email: 'octocat@example.com', primary: true, verified: true, visibility: 'public' },
        ],
      };
      const first = await signIn(octo);
      assert.equal(first.statusCode, 200, first.body);
      assert.ok(setCookie(first, 'gatehouse_refresh'));
      const identity = await t.ctx.db
        .selectFrom('identities')
        .selectAll()
        .where('issuer', '=', gh.origin)
        .executeTakeFirstOrThrow();
      assert.equal(identity.subject, '583231');
      assert.equal(identity.email, 'octocat@example.com');
      const again = await signIn({ ...octo, login: 'renamed' });
      assert.equal(again.statusCode, 200);
      const count = await t.ctx.db
        .selectFrom('identities')
        .select('id')
        .where('issuer', '=', gh.origin)
        .execute();
      assert.equal(count.length, 1);
    });

    it('only a verified primary address counts: a verified secondary neither links nor creates', async () => {
      const holder = await createUser(t, {
        email: 'taken@example.com',
        password: 'a long password for taken 1',
      });
      const res = await signIn({
        id: 99,
        login: 'sneaky',
        name: null,
        emails: [
          { email: 'unproven@example.com', primary: true, verified: false, visibility: null },
          { email: 'taken@example.com', primary: false, verified: true, visibility: null },
        ],
      });
      assert.equal(res.statusCode, 302);
      assert.equal(res.headers.location, '/account/sign-in?error=forbidden');
      const linked = await t.ctx.db
        .selectFrom('identities')
        .select('id')
        .where('user_id', '=', holder.id)
        .execute();
      assert.equal(linked.length, 0);
    });

    it('a refused code lands on the sign-in page, nothing signed in', async () => {
      const start = await t.app.inject({ url: '/api/v1/idp/github/start' });
      const state = new URL(String(start.headers.location)).searchParams.get('state') ?? '';
      const res = await t.app.inject({
        url: `/api/v1/idp/github/callback?code=forged&state=${state}`,
        headers: { cookie: `gatehouse_idp_flow=${setCookie(start, 'gatehouse_idp_flow')}` },
      });
      assert.equal(res.statusCode, 302);
      assert.match(String(res.headers.location), /^\/account\/sign-in\?error=/);
      assert.equal(setCookie(res, 'gatehouse_refresh'), undefined);
    });
  });
}
