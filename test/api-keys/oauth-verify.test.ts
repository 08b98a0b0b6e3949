import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type OauthStack, startOauthApp } from '../oauth/support.ts';

// docs/api.md §22: "caller: an admin, or a key or token holding scope api_keys:verify". An OAuth
// client gets such a token for Gatehouse's own API (`<PUBLIC_URL>/api/v1`, a built-in resource) by
// client credentials; every other endpoint still refuses it (§17).
const OTHER_API = 'https://api.example.test/';

for (const dialect of DIALECTS) {
  describe(`api_keys.verify with an OAuth client's token (${dialect})`, () => {
    let s: OauthStack;
    let own: string;
    let key: string;
    type Client = { client_id: string; client_secret: string };
    const makeClient = async (name: string, scopes: string[], resources: string[]): Promise<Client> => {
      const res = await s.admin('POST', '/api/v1/clients', {
        name,
        grant_types: ['client_credentials'],
        scopes,
        resources,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body as Client;
    };
    const tokenOf = async (c: Client, params: Record<string, string>) => {
      const config = await oidc.discovery(new URL(s.origin), c.client_id, c.client_secret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
      return (await oidc.clientCredentialsGrant(config, params)).access_token;
    };
    const verify = (token: string, body: unknown = { key }) =>
      fetch(`${s.origin}/api/v1/api-keys/verify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    before(async () => {
      s = await startOauthApp(dialect);
      own = `${s.origin}/api/v1`;
      const created = await s.admin('POST', '/api/v1/api-keys', { name: 'customer', scopes: ['users:read'] });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      key = String(created.body.key);
      const api = await s.admin('POST', '/api/v1/resources', {
        identifier: OTHER_API,
        name: 'Items API',
        scopes: [{ name: 'read:items', description: 'Read your items' }],
      });
      assert.equal(api.status, 201, JSON.stringify(api.body));
    });
    after(() => s?.close());

    it('a client holding api_keys:verify gets a token that verify accepts; nothing else accepts it', async () => {
      const client = await makeClient('Verifier', ['api_keys:verify'], [own]);
      const token = await tokenOf(client, { scope: 'api_keys:verify', resource: own });
      const res = await verify(token);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { valid: boolean; scopes: string[] };
      assert.equal(body.valid, true);
      assert.deepEqual(body.scopes, ['users:read']);
      const unknown = await verify(token, { key: 'not a key' });
      assert.deepEqual(await unknown.json(), { valid: false, reason: 'invalid' });
      // §17: OAuth clients never get tokens that the rest of /api/v1 accepts.
      for (const path of ['/api/v1/users', '/api/v1/verify-token', '/api/v1/api-keys']) {
        const other = await fetch(`${s.origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(other.status, 401, path);
        assert.equal(((await other.json()) as { code: string }).code, 'token_invalid', path);
      }
    });

    it('a client without the scope is refused 403 insufficient_scope', async () => {
      const client = await makeClient('No scope', ['read:items'], [own, OTHER_API]);
      const token = await tokenOf(client, { resource: own });
      const res = await verify(token);
      assert.equal(res.status, 403);
      assert.equal(((await res.json()) as { code: string }).code, 'insufficient_scope');
      assert.match(
        String(res.headers.get('www-authenticate')),
        /error="insufficient_scope", scope="api_keys:verify"/,
      );
      // Asking for the scope it was not given is the authorization server's invalid_scope.
      await assert.rejects(
        tokenOf(client, { scope: 'api_keys:verify', resource: own }),
        (err: { error?: string }) => err.error === 'invalid_scope',
      );
      // A token for another API is no token for Gatehouse's.
      const items = await tokenOf(client, { scope: 'read:items', resource: OTHER_API });
      const refused = await verify(items);
      assert.equal(refused.status, 401);
      assert.equal(((await refused.json()) as { code: string }).code, 'token_invalid');
    });

    it("the client's deletion, or losing the resource, ends its tokens at once", async () => {
      const client = await makeClient('Short-lived', ['api_keys:verify'], [own]);
      const token = await tokenOf(client, { scope: 'api_keys:verify', resource: own });
      assert.equal((await verify(token)).status, 200);
      const deleted = await s.admin('DELETE', `/api/v1/clients/${client.client_id}`);
      assert.equal(deleted.status, 204);
      const res = await verify(token);
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as { code: string }).code, 'token_invalid');
    });

    it('while oauth is off its tokens authenticate nowhere', async () => {
      const client = await makeClient('Switched', ['api_keys:verify'], [own]);
      const token = await tokenOf(client, { scope: 'api_keys:verify', resource: own });
      assert.equal((await s.admin('PUT', '/api/v1/admin/modules/oauth', { enabled: false })).status, 200);
      try {
        assert.equal((await verify(token)).status, 401);
      } finally {
        assert.equal((await s.admin('PUT', '/api/v1/admin/modules/oauth', { enabled: true })).status, 200);
      }
      assert.equal((await verify(token)).status, 200);
    });
  });
}
