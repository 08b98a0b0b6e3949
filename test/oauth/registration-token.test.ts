import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type OauthStack, startOauthApp } from './support.ts';

// docs/api.md §17 "Dynamic registration" and docs/oauth.md: initial access tokens made by an admin
// through the API (the console's way), the same service as `gatehouse clients registration-token`.
const PATH = '/api/v1/clients/registration-tokens';
const META = { client_name: 'Agent', redirect_uris: ['https://agent.example.test/cb'] };
const idHash = (token: string) => createHash('sha256').update(token).digest('base64url');

async function register(s: OauthStack, token: string, meta: Record<string, unknown> = META) {
  const res = await fetch(`${s.origin}/oauth2/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(meta),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

for (const dialect of DIALECTS) {
  describe(`registration tokens through the admin API, OAUTH_DYNAMIC_REGISTRATION=token [${dialect}]`, () => {
    let s: OauthStack;
    before(async () => {
      s = await startOauthApp(dialect, { OAUTH_DYNAMIC_REGISTRATION: 'token' });
    });
    after(() => s?.close());

    it('is listed under the oauth module; 201 {token, expires_at}, no-store; the token registers a client once (openid-client)', async () => {
      const index = (await (await fetch(`${s.origin}/`)).json()) as {
        documentation: Record<string, Record<string, string>>;
      };
      assert.equal(index.documentation.clients?.registration_token, `POST ${PATH}`);

      const before = Date.now();
      const made = await s.admin('POST', PATH, { ttl_s: 600 });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assert.deepEqual(Object.keys(made.body).sort(), ['expires_at', 'token']);
      const token = made.body.token as string;
      assert.ok(token.length >= 32);
      const expires = Date.parse(made.body.expires_at as string);
      assert.ok(expires >= before + 599_000 && expires <= Date.now() + 600_000, 'expires_at is ttl_s ahead');

      const config = await oidc.dynamicClientRegistration(
        new URL(s.origin),
        { ...META, token_endpoint_auth_method: 'client_secret_basic' },
        undefined,
        { initialAccessToken: token, execute: [oidc.allowInsecureRequests] },
      );
      const clientId = config.clientMetadata().client_id;
      const stored = await s.admin('GET', `/api/v1/clients/${clientId}`);
      assert.equal(stored.status, 200);
      assert.equal(stored.body.registered, true);
      assert.equal(stored.body.first_party, false);

      // Single use: the same token again is refused like an unknown one, and registers nothing.
      const again = await register(s, token);
      assert.equal(again.status, 401);
      assert.equal(again.body.error, 'invalid_token');
      const clients = (await s.admin('GET', '/api/v1/clients')).body.data as unknown[];
      assert.equal(clients.length, 1);
    });

    it('answers no-store, and `{}` gets the default lifetime (one day)', async () => {
      const res = await fetch(`${s.origin}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'root@gatehouse.test', password: 'correct horse battery staple 42' }),
      });
      const { access_token } = (await res.json()) as { access_token: string };
      const before = Date.now();
      const made = await fetch(`${s.origin}${PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
        body: '{}',
      });
      assert.equal(made.status, 201);
      assert.equal(made.headers.get('cache-control'), 'no-store');
      const body = (await made.json()) as { expires_at: string };
      assert.ok(Date.parse(body.expires_at) >= before + 86_399_000);
    });

    it('stores only the hash of the token; the audit entry names the admin, never the value', async () => {
      const { token } = (await s.admin('POST', PATH, { ttl_s: 3600 })).body as { token: string };
      const models = await s.t.ctx.db.selectFrom('oauth_models').selectAll().execute();
      const row = models.find((m) => m.model === 'InitialAccessToken' && m.id_hash === idHash(token));
      assert.ok(row, 'stored under the SHA-256 of the value');
      assert.equal(JSON.stringify(models).includes(token), false, 'no plain token in oauth_models');
      const audits = await s.t.ctx.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'oauth.registration_token_create')
        .execute();
      assert.ok(audits.length >= 1);
      const admin = await s.t.ctx.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'root@gatehouse.test')
        .executeTakeFirstOrThrow();
      assert.ok(audits.every((a) => a.actor_type === 'user' && a.actor_id === admin.id));
      assert.ok(audits.some((a) => JSON.parse(a.details).ttl_s === 3600));
      assert.equal(JSON.stringify(audits).includes(token), false, 'no plain token in the audit log');
    });

    it('refuses an expired token, and keeps a token whose registration was refused for its metadata', async () => {
      const { token } = (await s.admin('POST', PATH, { ttl_s: 60 })).body as { token: string };
      // A bad redirect URI is refused before the token is spent: the same token then works.
      const bad = await register(s, token, { ...META, redirect_uris: ['http://agent.example.test/cb'] });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error, 'invalid_client_metadata');
      assert.equal((await register(s, token)).status, 201);

      const { token: old } = (await s.admin('POST', PATH, { ttl_s: 60 })).body as { token: string };
      // Its expiry reached (moved back in the store rather than waited for).
      await s.t.ctx.db
        .updateTable('oauth_models')
        .set({ expires_at: Date.now() - 1000 })
        .where('model', '=', 'InitialAccessToken')
        .where('id_hash', '=', idHash(old))
        .execute();
      const expired = await register(s, old);
      assert.equal(expired.status, 401);
      assert.equal(expired.body.error, 'invalid_token');
    });

    it('spends a token once even when two registrations race with it', async () => {
      const { token } = (await s.admin('POST', PATH, { ttl_s: 600 })).body as { token: string };
      const statuses = (await Promise.all([register(s, token), register(s, token), register(s, token)]))
        .map((r) => r.status)
        .sort();
      assert.deepEqual(statuses, [201, 401, 401]);
    });

    it('a client registered with a token is still readable (RFC 7592) once the mode is open', async () => {
      // Its registration access token carries the token's policy name: an instance in another mode
      // must still know it, or the read would fail with a 500.
      const { token } = (await s.admin('POST', PATH, { ttl_s: 600 })).body as { token: string };
      const made = await register(s, token);
      assert.equal(made.status, 201);
      const open = await s.t.restart({ OAUTH_DYNAMIC_REGISTRATION: 'open' });
      try {
        const read = await open.app.inject({
          url: `/oauth2/register/${made.body.client_id}`,
          headers: { authorization: `Bearer ${made.body.registration_access_token}` },
        });
        assert.equal(read.statusCode, 200, read.body);
        assert.equal(read.json().client_id, made.body.client_id);
      } finally {
        await open.close();
      }
    });

    it('refuses bad input with problem+json, and anyone but an admin', async () => {
      for (const body of [
        { ttl_s: 59 },
        { ttl_s: 31_536_001 },
        { ttl_s: 600.5 },
        { ttl_s: '600' },
        { ttl: 600 },
      ]) {
        const res = await s.admin('POST', PATH, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'validation_failed');
      }
      const anonymous = await fetch(`${s.origin}${PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.headers.get('content-type'), 'application/problem+json; charset=utf-8');

      const created = await s.admin('POST', '/api/v1/users', {
        email: 'member@gatehouse.test',
        password: 'another correct horse 42',
        name: 'Member',
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const login = await fetch(`${s.origin}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'member@gatehouse.test', password: 'another correct horse 42' }),
      });
      const { access_token } = (await login.json()) as { access_token: string };
      const member = await fetch(`${s.origin}${PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
        body: '{}',
      });
      assert.equal(member.status, 403);
      assert.equal(((await member.json()) as { code: string }).code, 'forbidden');
    });
  });

  describe(`registration tokens while OAUTH_DYNAMIC_REGISTRATION is off [${dialect}]`, () => {
    let s: OauthStack;
    before(async () => {
      s = await startOauthApp(dialect);
    });
    after(() => s?.close());

    it('answers 409 module_unavailable naming the setting, and makes nothing', async () => {
      const res = await s.admin('POST', PATH, { ttl_s: 600 });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'module_unavailable');
      assert.match(String(res.body.detail), /OAUTH_DYNAMIC_REGISTRATION is not token/);
      const rows = await s.t.ctx.db
        .selectFrom('oauth_models')
        .select('id_hash')
        .where('model', '=', 'InitialAccessToken')
        .execute();
      assert.deepEqual(rows, []);
    });
  });
}
