import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { authorizeAt } from '../support/oidc-browser.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

const SECRET = 'upstream-client-secret-of-test';
const callbackOf = (name: string) => `${PUBLIC_URL}/api/v1/idp/${name}/callback`;

/** The cookie value a response set, by name ('' when it was cleared). */
function setCookie(res: LightMyRequestResponse, name: string): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const line = lines.find((l) => l.startsWith(`${name}=`));
  return line === undefined ? undefined : line.slice(name.length + 1).split(';')[0];
}

for (const dialect of DIALECTS) {
  describe(`providers: admin API and the redirect flow against two real oidc-provider instances [${dialect}]`, () => {
    let one: OidcHarness;
    let two: OidcHarness;
    let t: TestApp;
    let admin: { authorization: string };

    before(async () => {
      one = await startOidcProvider({
        clientId: 'gh-one',
        clientSecret: SECRET,
        redirectUris: [callbackOf('one')],
      });
      two = await startOidcProvider({
        clientId: 'gh-two',
        clientSecret: SECRET,
        redirectUris: [callbackOf('two')],
        accounts: {
          carol: { email: 'carol@example.com', email_verified: true, name: 'Carol' },
          mallory: { email: 'victim@example.com', email_verified: false, name: 'Mallory' },
        },
      });
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      admin = await authHeaders(t, await firstAdmin(t));
      for (const [name, op] of [
        ['one', one],
        ['two', two],
      ] as const) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/idp/providers',
          headers: admin,
          payload: {
            name,
            display_name: `Provider ${name}`,
            issuer: op.issuer,
            client_id: op.clientId,
            client_secret: SECRET,
          },
        });
        assert.equal(res.statusCode, 201, res.body);
      }
    });
    after(async () => {
      await t?.destroy();
      await one?.stop();
      await two?.stop();
    });

    /** start → the provider's forms → the callback, as a browser would; returns the callback's answer. */
    async function signIn(name: string, op: OidcHarness, account: string, returnTo?: string) {
      const q = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
      const start = await t.app.inject({ url: `/api/v1/idp/${name}/start${q}` });
      assert.equal(start.statusCode, 302, start.body);
      const flow = setCookie(start, 'gatehouse_idp_flow');
      assert.ok(flow);
      const back = await authorizeAt(String(start.headers.location), account, callbackOf(name));
      void op;
      const res = await t.app.inject({
        url: `${back.pathname}${back.search}`,
        headers: { cookie: `gatehouse_idp_flow=${flow}` },
      });
      return { res, flow, back };
    }

    it('manages providers: 201, list, 409 provider_exists, 404 provider_not_found; secrets write-only and sealed', async () => {
      const list = await t.app.inject({ url: '/api/v1/idp/providers', headers: admin });
      assert.equal(list.statusCode, 200);
      const data = json<{ data: Array<Record<string, unknown>> }>(list).data;
      assert.deepEqual(
        data.map((p) => p.name),
        ['one', 'two'],
      );
      assert.ok(!list.body.includes(SECRET));
      assert.ok(!('client_secret' in data[0]!));
      const row = await t.ctx.db
        .selectFrom('idp_providers')
        .selectAll()
        .where('name', '=', 'one')
        .executeTakeFirstOrThrow();
      assert.ok(row.client_secret_box?.startsWith('v1.'));
      assert.ok(!JSON.stringify(row).includes(SECRET));

      const again = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/providers',
        headers: admin,
        payload: { name: 'one', issuer: one.issuer, client_id: 'x' },
      });
      assert.equal(json(again).code, 'provider_exists');
      assert.equal(again.statusCode, 409);
      const missing = await t.app.inject({
        method: 'DELETE',
        url: '/api/v1/idp/providers/nope',
        headers: admin,
      });
      assert.equal(missing.statusCode, 404);
      assert.equal(json(missing).code, 'provider_not_found');
      const put = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/idp/providers/nope',
        headers: admin,
        payload: { enabled: false },
      });
      assert.equal(json(put).code, 'provider_not_found');
      const user = await authHeaders(t, await createUser(t));
      const forbidden = await t.app.inject({ url: '/api/v1/idp/providers', headers: user });
      assert.equal(forbidden.statusCode, 403);
    });

    it('fills presets: google, microsoft (GUID tenant, no common), gitlab, apple (key checked), github', async () => {
      const create = (payload: Record<string, unknown>) =>
        t.app.inject({ method: 'POST', url: '/api/v1/idp/providers', headers: admin, payload });
      const google = await create({ name: 'google', preset: 'google', client_id: 'g', client_secret: 's' });
      assert.equal(google.statusCode, 201, google.body);
      assert.equal(json(google).issuer, 'https://accounts.google.com');
      assert.deepEqual(json(google).scopes, ['openid', 'email', 'profile']);
      assert.equal(json(google).display_name, 'Google');
      const common = await create({
        name: 'ms',
        preset: 'microsoft',
        tenant_id: 'common',
        client_id: 'm',
        client_secret: 's',
      });
      assert.equal(common.statusCode, 400);
      const noTenant = await create({ name: 'ms', preset: 'microsoft', client_id: 'm', client_secret: 's' });
      assert.equal(noTenant.statusCode, 400);
      const ms = await create({
        name: 'ms',
        preset: 'microsoft',
        tenant_id: '9188040d-6c67-4c5b-b112-36a304b66dad',
        client_id: 'm',
        client_secret: 's',
      });
      assert.equal(
        json(ms).issuer,
        'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0',
      );
      const gitlab = await create({ name: 'gitlab', preset: 'gitlab', client_id: 'l', client_secret: 's' });
      assert.equal(json(gitlab).issuer, 'https://gitlab.com');
      const badKey = await create({
        name: 'apple',
        preset: 'apple',
        client_id: 'com.example',
        team_id: 'ABCDE12345',
        key_id: 'KEY1234567',
        private_key: 'not a key',
      });
      assert.equal(badKey.statusCode, 400);
      const github = await create({ name: 'github', preset: 'github', client_id: 'h', client_secret: 's' });
      assert.equal(json(github).kind, 'github');
      assert.equal(json(github).issuer, 'https://github.com');
      for (const name of ['google', 'ms', 'gitlab', 'github']) {
        const del = await t.app.inject({
          method: 'DELETE',
          url: `/api/v1/idp/providers/${name}`,
          headers: admin,
        });
        assert.equal(del.statusCode, 204);
      }
    });

    it('start refuses a foreign or ambiguous return_to with 400 before anything else', async () => {
      for (const bad of [
        'https://evil.example/',
        '//evil.example/',
        '/\\evil.example',
        '/a//b',
        '/%2F%2Fevil.example',
        'account',
        '/account\nx',
      ]) {
        const res = await t.app.inject({ url: `/api/v1/idp/one/start?return_to=${encodeURIComponent(bad)}` });
        assert.equal(res.statusCode, 400, `${bad}: ${res.body}`);
        assert.equal(json(res).code, 'validation_failed');
        assert.equal(setCookie(res, 'gatehouse_idp_flow'), undefined);
      }
      const unknown = await t.app.inject({ url: '/api/v1/idp/nope/start' });
      assert.equal(json(unknown).code, 'provider_not_found');
    });

    it('start answers 302 with state, nonce and PKCE S256 and an HttpOnly SameSite=Lax cookie of 10 minutes', async () => {
      const res = await t.app.inject({ url: '/api/v1/idp/one/start?return_to=/account' });
      assert.equal(res.statusCode, 302);
      const to = new URL(String(res.headers.location));
      assert.equal(to.origin, one.issuer);
      for (const p of ['state', 'nonce', 'code_challenge']) assert.ok(to.searchParams.get(p));
      assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(to.searchParams.get('redirect_uri'), callbackOf('one'));
      const raw = String(res.headers['set-cookie']);
      assert.match(raw, /HttpOnly/i);
      assert.match(raw, /SameSite=Lax/i);
      assert.match(raw, /Max-Age=600/);
      assert.ok(!to.href.includes('/account'), 'return_to stays server-side');
    });

    it('first sign-in provisions, the second finds; the session opens with amr fed and continues to return_to', async () => {
      const first = await signIn('one', one, 'alice', '/account?tab=x');
      assert.equal(first.res.statusCode, 200, first.res.body);
      assert.match(first.res.body, /url=\/account\?tab=x/);
      const refresh = setCookie(first.res, 'gatehouse_refresh');
      assert.ok(refresh && refresh.length > 10);
      const user = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', 'alice@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(user.created_via, 'idp');
      const session = await t.ctx.db
        .selectFrom('sessions')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(session.amr ?? 'null'), ['fed']);
      const second = await signIn('one', one, 'alice');
      assert.equal(second.res.statusCode, 200);
      assert.match(second.res.body, /url=\/account"/);
      const users = await t.ctx.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'alice@example.com')
        .execute();
      assert.equal(users.length, 1);
      // No token in any URL: the landing page holds only the path.
      assert.ok(!first.res.body.includes(refresh!));
    });

    it('a replayed callback (same cookie, same code) lands on the sign-in page with link_invalid', async () => {
      const { res, flow, back } = await signIn('one', one, 'alice');
      assert.equal(res.statusCode, 200);
      const replay = await t.app.inject({
        url: `${back.pathname}${back.search}`,
        headers: { cookie: `gatehouse_idp_flow=${flow}` },
      });
      assert.equal(replay.statusCode, 302);
      assert.equal(replay.headers.location, '/account/sign-in?error=link_invalid');
      const noCookie = await t.app.inject({ url: `${back.pathname}${back.search}` });
      assert.equal(noCookie.headers.location, '/account/sign-in?error=link_invalid');
    });

    it("a state that is not the cookie's flow is refused, and so is a flow of another provider", async () => {
      const start = await t.app.inject({ url: '/api/v1/idp/one/start' });
      const flow = setCookie(start, 'gatehouse_idp_flow');
      const forged = await t.app.inject({
        url: '/api/v1/idp/one/callback?code=abc&state=forged',
        headers: { cookie: `gatehouse_idp_flow=${flow}` },
      });
      assert.equal(forged.statusCode, 302);
      assert.match(String(forged.headers.location), /^\/account\/sign-in\?error=/);
      assert.equal(setCookie(forged, 'gatehouse_refresh'), undefined);
      const start2 = await t.app.inject({ url: '/api/v1/idp/one/start' });
      const state = new URL(String(start2.headers.location)).searchParams.get('state');
      const other = await t.app.inject({
        url: `/api/v1/idp/two/callback?code=abc&state=${state ?? ''}`,
        headers: { cookie: `gatehouse_idp_flow=${setCookie(start2, 'gatehouse_idp_flow')}` },
      });
      assert.equal(other.headers.location, '/account/sign-in?error=link_invalid');
    });

    it('a verified address links to the existing account; an unverified one does not', async () => {
      const carol = await createUser(t, {
        email: 'carol@example.com',
        password: 'a long password for carol 1',
      });
      const linked = await signIn('two', two, 'carol');
      assert.equal(linked.res.statusCode, 200, linked.res.body);
      const ids = await t.ctx.db
        .selectFrom('identities')
        .selectAll()
        .where('user_id', '=', carol.id)
        .execute();
      assert.equal(ids.length, 1);
      assert.equal(ids[0]!.issuer, two.issuer);

      const victim = await createUser(t, {
        email: 'victim@example.com',
        password: 'a long password for victim',
      });
      const refused = await signIn('two', two, 'mallory');
      assert.equal(refused.res.statusCode, 302);
      assert.equal(refused.res.headers.location, '/account/sign-in?error=idp_token_invalid');
      assert.equal(setCookie(refused.res, 'gatehouse_refresh'), undefined);
      const none = await t.ctx.db
        .selectFrom('identities')
        .selectAll()
        .where('user_id', '=', victim.id)
        .execute();
      assert.equal(none.length, 0);
    });

    it('an account with a second factor gets the pending step, kept server-side, once', async () => {
      // A passkey-free TOTP user: enrol through the API.
      const dave = await createUser(t, {
        email: 'dave@example.com',
        password: 'a long password for dave 12',
      });
      one.setAccount('dave', { email: 'dave@example.com', email_verified: true, name: 'Dave' });
      const headers = await authHeaders(t, dave);
      const enrol = await t.app.inject({
        method: 'POST',
        url: '/api/v1/mfa/totp',
        headers,
        payload: { current_password: 'a long password for dave 12' },
      });
      assert.equal(enrol.statusCode, 200, enrol.body);
      const { totp } = await import('../browser/harness.ts');
      const confirm = await t.app.inject({
        method: 'POST',
        url: '/api/v1/mfa/totp/confirm',
        headers,
        payload: { code: totp(json<{ secret: string }>(enrol).secret) },
      });
      assert.equal(confirm.statusCode, 200, confirm.body);

      const { res } = await signIn('one', one, 'dave', '/account');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(setCookie(res, 'gatehouse_refresh'), undefined, 'not signed in before the second factor');
      assert.match(res.body, /url=\/account\/sign-in\?continue=provider/);
      const pending = setCookie(res, 'gatehouse_idp_mfa');
      assert.ok(pending);
      const take = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/continue',
        headers: { cookie: `gatehouse_idp_mfa=${pending}` },
      });
      assert.equal(take.statusCode, 200, take.body);
      const body = json<{ mfa_token: string; methods: string[]; return_to: string }>(take);
      assert.ok(body.methods.includes('totp'));
      assert.equal(body.return_to, '/account');
      const again = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/continue',
        headers: { cookie: `gatehouse_idp_mfa=${pending}` },
      });
      assert.equal(json(again).code, 'link_invalid');
    });
  });
}
