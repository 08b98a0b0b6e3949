import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type OauthStack, startOauthApp } from './support.ts';

for (const dialect of DIALECTS) {
  describe(`oauth dynamic registration, open (${dialect})`, () => {
    let s: OauthStack;
    before(async () => {
      s = await startOauthApp(dialect, {
        OAUTH_DYNAMIC_REGISTRATION: 'open',
        OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR: '2',
      });
    });
    after(() => s?.close());

    it('registers an ordinary client (registered, never first-party), refuses bad redirect URIs, limits per address', async () => {
      const meta = (await (await fetch(`${s.origin}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      assert.equal(meta.registration_endpoint, `${s.origin}/oauth2/register`);
      const index = (await (await fetch(`${s.origin}/`)).json()) as {
        documentation: Record<string, Record<string, string>>;
      };
      assert.equal(index.documentation.oauth?.register, 'POST /oauth2/register');

      const config = await oidc.dynamicClientRegistration(
        new URL(s.origin),
        {
          client_name: 'Agent',
          redirect_uris: ['http://127.0.0.1:8123/callback'],
          application_type: 'native',
          token_endpoint_auth_method: 'none',
          first_party: true,
        } as Partial<oidc.ClientMetadata>,
        undefined,
        { execute: [oidc.allowInsecureRequests] },
      );
      const clientId = config.clientMetadata().client_id;
      const stored = await s.admin('GET', `/api/v1/clients/${clientId}`);
      assert.equal(stored.status, 200);
      assert.equal(stored.body.registered, true);
      assert.equal(stored.body.first_party, false, 'first_party is admin-only');
      assert.equal(stored.body.type, 'public');

      const bad = await fetch(`${s.origin}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://evil.example.test/cb'], client_name: 'x' }),
      });
      assert.equal(bad.status, 400);
      assert.match(
        ((await bad.json()) as { error: string }).error,
        /^invalid_(client_metadata|redirect_uri)$/,
      );

      const third = await fetch(`${s.origin}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['https://app.example.test/cb'] }),
      });
      assert.equal(third.status, 429);
      assert.ok(Number(third.headers.get('retry-after')) > 0);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`oauth dynamic registration: the RFC 7592 read (${dialect})`, () => {
    let s: OauthStack;
    before(async () => {
      s = await startOauthApp(dialect, { OAUTH_DYNAMIC_REGISTRATION: 'open' });
    });
    after(() => s?.close());

    it('registration-read-hides-api-scopes: the read shows the scopes an admin set, API scopes too', async () => {
      const registered = await fetch(`${s.origin}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Reader',
          redirect_uris: ['http://127.0.0.1:8123/callback'],
          application_type: 'native',
          token_endpoint_auth_method: 'none',
        }),
      });
      assert.equal(registered.status, 201);
      const made = (await registered.json()) as {
        client_id: string;
        registration_client_uri: string;
        registration_access_token: string;
      };
      const api = await s.admin('POST', '/api/v1/resources', {
        identifier: 'https://notes.example.test/api',
        name: 'Notes API',
        scopes: [{ name: 'notes:read', description: 'Read your notes' }],
      });
      assert.equal(api.status, 201, JSON.stringify(api.body));
      const updated = await s.admin('PUT', `/api/v1/clients/${made.client_id}`, {
        resources: ['https://notes.example.test/api'],
        scopes: ['openid', 'notes:read'],
      });
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
      const read = await fetch(made.registration_client_uri, {
        headers: { authorization: `Bearer ${made.registration_access_token}` },
      });
      assert.equal(read.status, 200);
      const metadata = (await read.json()) as { client_id: string; scope: string };
      assert.equal(metadata.client_id, made.client_id);
      assert.deepEqual(metadata.scope.split(' ').sort(), ['notes:read', 'openid']);
    });
  });
}
