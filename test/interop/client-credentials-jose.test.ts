import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import { DIALECTS } from '../helpers/databases.ts';
import { type Gatehouse, type Registered, startGatehouse } from './harness.ts';

/*
 * A program calling an API as itself: the client credentials grant with `resource` (RFC 8707),
 * asked for with oauth4webapi, and the RFC 9068 access token verified by the API with jose as
 * docs/verifying-tokens.md says (`createRemoteJWKSet` on the JWKS, `jwtVerify` with issuer,
 * audience and `typ: at+jwt`). Introspection and revocation of such a JWT answer as §17 says.
 */

const API = 'https://notes.interop.test/';

for (const dialect of DIALECTS) {
  describe(`interop: client credentials verified by jose (${dialect})`, () => {
    let g: Gatehouse;
    let worker: Registered;
    before(async () => {
      g = await startGatehouse(dialect);
      const made = await g.admin('POST', '/api/v1/resources', {
        identifier: API,
        name: 'Notes API',
        scopes: [{ name: 'read:notes', description: 'Read your notes' }],
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      worker = await g.client({
        name: 'Notes indexer',
        grant_types: ['client_credentials'],
        scopes: ['read:notes'],
        resources: [API],
      });
    });
    after(() => g?.close());

    it('gets a token for the API that jose verifies with the JWKS, the issuer and the audience', async () => {
      const issuer = new URL(g.origin);
      const insecure = { [oauth.allowInsecureRequests]: true };
      const as = await oauth
        .discoveryRequest(issuer, { algorithm: 'oidc', ...insecure })
        .then((res) => oauth.processDiscoveryResponse(issuer, res));
      const client: oauth.Client = { client_id: worker.client_id };
      const auth = oauth.ClientSecretBasic(String(worker.client_secret));
      const tokens = await oauth.processClientCredentialsResponse(
        as,
        client,
        await oauth.clientCredentialsGrantRequest(
          as,
          client,
          auth,
          new URLSearchParams({ scope: 'read:notes', resource: API }),
          insecure,
        ),
      );
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');

      // The API's side: only the JWKS URL, the issuer and its own identifier.
      const jwks = jose.createRemoteJWKSet(new URL(String(as.jwks_uri)));
      const { payload, protectedHeader } = await jose.jwtVerify(tokens.access_token, jwks, {
        issuer: g.origin,
        audience: API,
        typ: 'at+jwt',
      });
      assert.equal(protectedHeader.typ, 'at+jwt');
      assert.equal(payload.sub, worker.client_id);
      assert.equal(payload.client_id, worker.client_id);
      assert.equal(payload.scope, 'read:notes');
      assert.equal(typeof payload.jti, 'string');
      assert.equal(payload.auth_time, undefined, 'no person signed in');
      await assert.rejects(
        jose.jwtVerify(tokens.access_token, jwks, {
          issuer: g.origin,
          audience: 'https://other.interop.test/',
        }),
        (err: unknown) => err instanceof jose.errors.JWTClaimValidationFailed,
      );

      // Gatehouse's own API accepts only its own audience.
      const own = await fetch(`${g.origin}/api/v1/profile`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(own.status, 401);

      // A stateless JWT: introspection answers inactive (RFC 7662 §2.2).
      const introspected = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure),
      );
      assert.equal(introspected.active, false);
    });
  });
}
