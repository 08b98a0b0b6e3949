import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { type OauthStack, startOauthApp } from './support.ts';

for (const dialect of DIALECTS) {
  describe(`oauth clients and resources admin API (${dialect})`, () => {
    let s: OauthStack;
    before(async () => {
      s = await startOauthApp(dialect);
    });
    after(() => s?.close());

    it('shows client_secret only at create and rotate, and stores it sealed, never in plain text', async () => {
      const created = await s.admin('POST', '/api/v1/clients', {
        name: 'Web app',
        redirect_uris: ['https://app.example.test/callback'],
      });
      assert.equal(created.status, 201);
      const { client_id, client_secret } = created.body as { client_id: string; client_secret: string };
      assert.equal(typeof client_secret, 'string');
      assert.equal(created.body.type, 'confidential');
      assert.equal(created.body.token_endpoint_auth_method, 'client_secret_basic');
      const got = await s.admin('GET', `/api/v1/clients/${client_id}`);
      assert.equal(got.status, 200);
      assert.equal(got.body.client_secret, undefined);
      const listed = await s.admin('GET', '/api/v1/clients');
      assert.ok(!JSON.stringify(listed.body).includes(client_secret));
      const row = await s.t.ctx.db
        .selectFrom('oauth_clients')
        .selectAll()
        .where('client_id', '=', client_id)
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(client_secret), 'the secret is not stored in plain text');
      const rotated = await s.admin('POST', `/api/v1/clients/${client_id}/secret`);
      assert.equal(rotated.status, 200);
      assert.notEqual(rotated.body.client_secret, client_secret);
    });

    it('refuses redirect URIs that are not exact https (web) or loopback/private-use (native)', async () => {
      const bad: Array<[string, Record<string, unknown>]> = [
        ['http for web', { redirect_uris: ['http://app.example.test/cb'] }],
        ['wildcard', { redirect_uris: ['https://*.example.test/cb'] }],
        ['fragment', { redirect_uris: ['https://app.example.test/cb#x'] }],
        ['relative', { redirect_uris: ['/cb'] }],
        [
          'native localhost name',
          { application_type: 'native', redirect_uris: ['http://localhost:8080/cb'] },
        ],
        ['native bare scheme', { application_type: 'native', redirect_uris: ['myapp:/cb'] }],
      ];
      for (const [label, body] of bad) {
        const res = await s.admin('POST', '/api/v1/clients', { name: 'x', ...body });
        assert.equal(res.status, 400, label);
        assert.equal(res.body.code, 'validation_failed', label);
      }
      const native = await s.admin('POST', '/api/v1/clients', {
        name: 'CLI',
        type: 'public',
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/cb', 'http://[::1]:4000/cb', 'com.example.app:/callback'],
      });
      assert.equal(native.status, 201, JSON.stringify(native.body));
      assert.equal(native.body.client_secret, undefined);
      assert.equal(native.body.token_endpoint_auth_method, 'none');
    });

    it('answers client_not_found, resource_not_found and resource_in_use', async () => {
      assert.equal((await s.admin('GET', '/api/v1/clients/nope')).body.code, 'client_not_found');
      assert.equal((await s.admin('DELETE', '/api/v1/clients/nope')).status, 404);
      assert.equal(
        (await s.admin('PUT', '/api/v1/resources/nope', { name: 'x' })).body.code,
        'resource_not_found',
      );
      const own = await s.admin('POST', '/api/v1/resources', { identifier: `${s.origin}/api`, name: 'Mine' });
      assert.equal(own.status, 400, 'an identifier under PUBLIC_URL is refused');
      const api = await s.admin('POST', '/api/v1/resources', {
        identifier: 'https://billing.example.test',
        name: 'Billing',
        scopes: [{ name: 'invoices:read', description: 'Read invoices' }],
      });
      assert.equal(api.status, 201);
      assert.equal(api.body.access_token_ttl_s, 300);
      const client = await s.admin('POST', '/api/v1/clients', {
        name: 'Billing worker',
        grant_types: ['client_credentials'],
        resources: ['https://billing.example.test'],
        scopes: ['invoices:read'],
      });
      assert.equal(client.status, 201);
      const refused = await s.admin('DELETE', `/api/v1/resources/${api.body.id}`);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, 'resource_in_use');
      assert.equal((await s.admin('DELETE', `/api/v1/clients/${client.body.client_id}`)).status, 204);
      assert.equal((await s.admin('DELETE', `/api/v1/resources/${api.body.id}`)).status, 204);
    });
  });

  describe(`oauth module off in form A (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t?.destroy());

    it('answers 404 module_disabled at /oauth2/* and keeps the discovery documents of section 14', async () => {
      const token = await t.app.inject({
        method: 'POST',
        url: '/oauth2/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials',
      });
      assert.equal(token.statusCode, 404);
      assert.equal(json(token).code, 'module_disabled');
      const meta = json(await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' }));
      assert.deepEqual(meta.response_types_supported, []);
      assert.equal(meta.token_endpoint, undefined);
    });
  });
}
