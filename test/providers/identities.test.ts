import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createLocalJWKSet, exportJWK, jwtVerify } from 'jose';
import { openSession } from '../../src/identity/sessions.ts';
import { appleClientSecret } from '../../src/modules/providers/upstream/presets.ts';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { authorizeAt } from '../support/oidc-browser.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

const SECRET = 'identities-test-secret';
const callbackOf = (name: string) => `${PUBLIC_URL}/api/v1/idp/${name}/callback`;
const CLIENT = { ip: '127.0.0.1', userAgent: 'test' };

function setCookie(res: LightMyRequestResponse, name: string): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const line = lines.find((l) => l.startsWith(`${name}=`));
  return line === undefined ? undefined : line.slice(name.length + 1).split(';')[0];
}

for (const dialect of DIALECTS) {
  describe(`providers: identities on /account — link, list, unlink [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;

    before(async () => {
      op = await startOidcProvider({
        clientId: 'acct',
        clientSecret: SECRET,
        redirectUris: [callbackOf('acct')],
        accounts: {
          erin: { email: 'erin-at-provider@example.com', email_verified: true, name: 'Erin' },
          frank: { email: 'frank@example.com', email_verified: true, name: 'Frank' },
          gina: { email: 'gina@example.com', email_verified: true, name: 'Gina' },
        },
      });
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      const admin = await authHeaders(t, await firstAdmin(t));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/providers',
        headers: admin,
        payload: {
          name: 'acct',
          display_name: 'Acct',
          issuer: op.issuer,
          client_id: 'acct',
          client_secret: SECRET,
        },
      });
      assert.equal(res.statusCode, 201, res.body);
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('links a provider to the signed-in account (a recent sign-in), lists it, and unlinks it after a fresh proof', async () => {
      const password = 'erin has a long password 123';
      const erin = await createUser(t, { email: 'erin@example.com', password });
      const headers = await authHeaders(t, erin);
      const link = await t.app.inject({ url: '/api/v1/idp/acct/link?return_to=/account', headers });
      assert.equal(link.statusCode, 200, link.body);
      const { authorization_url } = json<{ authorization_url: string }>(link);
      assert.equal(new URL(authorization_url).searchParams.get('max_age'), '0');
      const back = await authorizeAt(authorization_url, 'erin', callbackOf('acct'));
      const done = await t.app.inject({
        url: `${back.pathname}${back.search}`,
        headers: { cookie: `gatehouse_idp_flow=${setCookie(link, 'gatehouse_idp_flow')}` },
      });
      assert.equal(done.statusCode, 200, done.body);
      assert.equal(setCookie(done, 'gatehouse_refresh'), undefined, 'a link opens no new session');
      const list = await t.app.inject({ url: '/api/v1/idp/identities', headers });
      const data = json<{ data: Array<{ id: string; provider: string; subject: string }> }>(list).data;
      assert.equal(data.length, 1);
      assert.equal(data[0]?.provider, 'acct');
      assert.equal(data[0]?.subject, 'erin');

      const id = data[0]!.id;
      const bare = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/idp/identities/${id}`,
        headers,
        payload: {},
      });
      assert.equal(bare.statusCode, 401);
      assert.equal(json(bare).code, 'reauthentication_required');
      const wrong = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/idp/identities/${id}`,
        headers,
        payload: { current_password: 'not it at all, no' },
      });
      assert.equal(json(wrong).code, 'invalid_credentials');
      const ok = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/idp/identities/${id}`,
        headers,
        payload: { current_password: password },
      });
      assert.equal(ok.statusCode, 204, ok.body);
      const after = await t.app.inject({ url: '/api/v1/idp/identities', headers });
      assert.deepEqual(json(after).data, []);
    });

    it('linking needs a sign-in from the last 5 minutes: an older session gets 401 reauthentication_required', async () => {
      const user = await createUser(t, { password: 'an older session password' });
      const old = await openSession(t.ctx, user, CLIENT, {
        amr: ['pwd'],
        authTime: Date.now() - 10 * 60_000,
      });
      const res = await t.app.inject({
        url: '/api/v1/idp/acct/link',
        headers: { authorization: `Bearer ${old.access_token}` },
      });
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'reauthentication_required');
      assert.equal(setCookie(res, 'gatehouse_idp_flow'), undefined);
    });

    it('the last way to sign in is never removed: 409 last_sign_in_method', async () => {
      // Frank exists only through the provider: no password, no passkey, one identity.
      const start = await t.app.inject({ url: '/api/v1/idp/acct/start' });
      const back = await authorizeAt(String(start.headers.location), 'frank', callbackOf('acct'));
      const signedIn = await t.app.inject({
        url: `${back.pathname}${back.search}`,
        headers: { cookie: `gatehouse_idp_flow=${setCookie(start, 'gatehouse_idp_flow')}` },
      });
      assert.equal(signedIn.statusCode, 200, signedIn.body);
      const frank = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', 'frank@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(frank.password_hash, null);
      const session = await openSession(t.ctx, frank, CLIENT, { amr: ['fed'] });
      const headers = { authorization: `Bearer ${session.access_token}` };
      const [identity] = json<{ data: Array<{ id: string }> }>(
        await t.app.inject({ url: '/api/v1/idp/identities', headers }),
      ).data;
      // A provider sign-in a moment ago is the proof; the rule still refuses.
      const res = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/idp/identities/${identity!.id}`,
        headers,
        payload: {},
      });
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(json(res).code, 'last_sign_in_method');
    });

    it('the callback also takes the answer as a form_post; a form body anywhere else is 415', async () => {
      const start = await t.app.inject({ url: '/api/v1/idp/acct/start' });
      const back = await authorizeAt(String(start.headers.location), 'gina', callbackOf('acct'));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/acct/callback',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: `gatehouse_idp_flow=${setCookie(start, 'gatehouse_idp_flow')}`,
        },
        payload: back.searchParams.toString(),
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(setCookie(res, 'gatehouse_refresh'));
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'email=a%40b.c&password=x',
      });
      assert.equal(login.statusCode, 415);
    });

    it("mints Apple's client secret as an ES256 JWT signed with the team's key", async () => {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const secret = await appleClientSecret(
        { teamId: 'ABCDE12345', keyId: 'KEY1234567', clientId: 'com.example.web' },
        pem,
      );
      const jwk = { ...(await exportJWK(publicKey)), kid: 'KEY1234567', alg: 'ES256' };
      const { payload, protectedHeader } = await jwtVerify(secret, createLocalJWKSet({ keys: [jwk] }), {
        issuer: 'ABCDE12345',
        subject: 'com.example.web',
        audience: 'https://appleid.apple.com',
      });
      assert.equal(protectedHeader.alg, 'ES256');
      assert.equal(protectedHeader.kid, 'KEY1234567');
      assert.ok(
        typeof payload.exp === 'number' && typeof payload.iat === 'number' && payload.exp > payload.iat,
      );
    });

    it('switching providers off while accounts sign in only through them: 409 module_in_use unless forced', async () => {
      // Frank (above) has no password and no passkey: only his identity at this provider.
      const admin = await authHeaders(t, await firstAdmin(t));
      const off = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/providers',
        headers: admin,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 409, off.body);
      assert.equal(json(off).code, 'module_in_use');
      const forced = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/providers',
        headers: admin,
        payload: { enabled: false, force: true },
      });
      assert.equal(forced.statusCode, 200, forced.body);
      const on = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/providers',
        headers: admin,
        payload: { enabled: true },
      });
      assert.equal(on.statusCode, 200);
    });

    it('POST /idp/verify takes "provider" while providers is on: that provider\'s issuer, client and settings', async () => {
      op.setAccount('ivy', { email: 'ivy@example.com', email_verified: true, name: 'Ivy' });
      const token = await op.craftIdToken({ sub: 'ivy' });
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/verify',
        payload: { id_token: token, provider: 'acct' },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).created, true);
      const unknown = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/verify',
        payload: { id_token: await op.craftIdToken({ sub: 'ivy' }), provider: 'nope' },
      });
      assert.equal(json(unknown).code, 'provider_not_found');
      // Form A: the body is exactly section 7's.
      const formA = await buildTestApp(dialect);
      try {
        const refused = await formA.app.inject({
          method: 'POST',
          url: '/api/v1/idp/verify',
          payload: { id_token: token, provider: 'acct' },
        });
        assert.equal(refused.statusCode, 400, refused.body);
        assert.equal(json(refused).code, 'validation_failed');
      } finally {
        await formA.destroy();
      }
    });
  });
}
