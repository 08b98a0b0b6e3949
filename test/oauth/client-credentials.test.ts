import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type OauthStack, startOauthApp } from './support.ts';

const API = 'https://api.example.test/';

for (const dialect of DIALECTS) {
  describe(`oauth client credentials, resources, introspection, revocation (${dialect})`, () => {
    let s: OauthStack;
    let worker: { client_id: string; client_secret: string };
    let other: { client_id: string; client_secret: string };
    let auditor: { client_id: string; client_secret: string };
    const discover = (c: { client_id: string; client_secret: string }) =>
      oidc.discovery(new URL(s.origin), c.client_id, c.client_secret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });

    before(async () => {
      s = await startOauthApp(dialect);
      const resource = await s.admin('POST', '/api/v1/resources', {
        identifier: API,
        name: 'Items API',
        scopes: [{ name: 'read:items', description: 'Read your items' }],
      });
      assert.equal(resource.status, 201, JSON.stringify(resource.body));
      const make = async (name: string, extra: Record<string, unknown> = {}) => {
        const res = await s.admin('POST', '/api/v1/clients', {
          name,
          grant_types: ['client_credentials'],
          scopes: ['read:items'],
          resources: [API],
          ...extra,
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body as { client_id: string; client_secret: string };
      };
      worker = await make('Worker');
      other = await make('Other');
      auditor = await make('Auditor', { introspection: true });
    });
    after(() => s?.close());

    it('discovery advertises only what is served: no PAR, no client_secret_jwt, no HS*, one JWKS with RS256', async () => {
      const meta = (await (await fetch(`${s.origin}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      assert.equal(meta.issuer, s.origin);
      assert.equal(meta.jwks_uri, `${s.origin}/.well-known/jwks.json`);
      assert.equal(meta.token_endpoint, `${s.origin}/oauth2/token`);
      assert.equal(meta.introspection_endpoint, `${s.origin}/oauth2/introspect`);
      assert.equal(meta.revocation_endpoint, `${s.origin}/oauth2/revoke`);
      assert.equal(meta.end_session_endpoint, `${s.origin}/oauth2/logout`);
      assert.equal(meta.pushed_authorization_request_endpoint, undefined);
      assert.equal(meta.registration_endpoint, undefined);
      assert.deepEqual(meta.response_types_supported, ['code']);
      assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
      assert.ok(!(meta.token_endpoint_auth_methods_supported as string[]).includes('client_secret_jwt'));
      const algs = JSON.stringify(meta).match(/"HS\d+"/g);
      assert.equal(algs, null, 'no HS* algorithm is advertised');
      const oauthMeta = (await (
        await fetch(`${s.origin}/.well-known/oauth-authorization-server`)
      ).json()) as Record<string, unknown>;
      assert.equal(oauthMeta.issuer, s.origin);
      assert.equal(oauthMeta.token_endpoint, `${s.origin}/oauth2/token`);
      // Code flow answers by query or form_post only (docs/api.md §17): no fragment.
      assert.deepEqual(meta.response_modes_supported, ['query', 'form_post']);
      assert.deepEqual(oauthMeta.response_modes_supported, ['query', 'form_post']);
      const jwks = (await (await fetch(`${s.origin}/.well-known/jwks.json`)).json()) as {
        keys: Array<{ alg: string; d?: string }>;
      };
      assert.ok(
        jwks.keys.some((k) => k.alg === 'RS256'),
        'an RS256 key is published while oauth is on',
      );
      assert.ok(
        jwks.keys.every((k) => k.d === undefined),
        'no private part is published',
      );
    });

    it('a token asked for with resource is an RFC 9068 JWT for that audience, refused by /api/v1', async () => {
      const config = await discover(worker);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'read:items', resource: API });
      const header = decodeProtectedHeader(tokens.access_token);
      assert.equal(header.typ, 'at+jwt');
      // A token for another service is signed like every such token, with ACCESS_TOKEN_ALG (ES256 by
      // default, docs/api.md §14), not with the ID tokens' RS256.
      assert.equal(header.alg, 'ES256');
      const { payload } = await jwtVerify(
        tokens.access_token,
        createRemoteJWKSet(new URL(`${s.origin}/.well-known/jwks.json`)),
        {
          issuer: s.origin,
          audience: API,
          typ: 'at+jwt',
        },
      );
      assert.equal(payload.client_id, worker.client_id);
      assert.equal(payload.sub, worker.client_id);
      assert.equal(payload.scope, 'read:items');
      assert.equal(typeof payload.jti, 'string');
      assert.equal(payload.auth_time, undefined);
      const own = await fetch(`${s.origin}/api/v1/verify-token`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(own.status, 401);
      const refused = (await own.json()) as { code: string; detail: string };
      assert.equal(refused.code, 'token_invalid');
      // The hole: the detail named the role claim (jose's presence check ran before the audience's).
      assert.match(refused.detail, /aud claim is not accepted/);
      // Stateless (docs/api.md §17): introspection answers {"active": false} (RFC 7662 §2.2: it
      // cannot vouch for it; libraries treat a 400 as a failure), revocation unsupported_token_type.
      assert.deepEqual(await oidc.tokenIntrospection(config, tokens.access_token), { active: false });
      await assert.rejects(
        oidc.tokenRevocation(config, tokens.access_token),
        (err: oidc.ResponseBodyError) => {
          assert.equal(err.error, 'unsupported_token_type');
          assert.equal(err.status, 400);
          return true;
        },
      );
      // A caller that authenticates as no client gets the library's refusal, no answer about the token.
      const anonymous = await fetch(`${s.origin}/oauth2/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: tokens.access_token }).toString(),
      });
      assert.equal(anonymous.status, 400);
      assert.equal(((await anonymous.json()) as { error: string }).error, 'invalid_request');
    });

    it('a resource the client is not registered for answers invalid_target; an unregistered scope invalid_scope', async () => {
      const config = await discover(worker);
      await assert.rejects(
        oidc.clientCredentialsGrant(config, { scope: 'read:items', resource: 'https://other.example.test/' }),
        (err: oidc.ResponseBodyError) => err.error === 'invalid_target',
      );
      await assert.rejects(
        oidc.clientCredentialsGrant(config, { scope: 'write:items', resource: API }),
        (err: oidc.ResponseBodyError) => err.error === 'invalid_scope',
      );
    });

    it('without resource the token is opaque: introspected by its client or an introspection client, revocable', async () => {
      const config = await discover(worker);
      const tokens = await oidc.clientCredentialsGrant(config, {});
      assert.equal(tokens.access_token.split('.').length, 1, 'opaque');
      const mine = await oidc.tokenIntrospection(config, tokens.access_token);
      assert.equal(mine.active, true);
      assert.equal(mine.client_id, worker.client_id);
      const stranger = await oidc.tokenIntrospection(await discover(other), tokens.access_token);
      assert.deepEqual(stranger, { active: false });
      const audit = await oidc.tokenIntrospection(await discover(auditor), tokens.access_token);
      assert.equal(audit.active, true);
      // RFC 7009 §2.2 leaves the body open; JSON `{}` is what libraries parsing every answer expect.
      const revoked = await fetch(`${s.origin}/oauth2/revoke`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${worker.client_id}:${worker.client_secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token: tokens.access_token }).toString(),
      });
      assert.equal(revoked.status, 200);
      assert.match(String(revoked.headers.get('content-type')), /^application\/json/);
      assert.deepEqual(await revoked.json(), {});
      assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, false);
    });

    it('stores models under the SHA-256 of their id, without the id: no usable token in the database', async () => {
      const config = await discover(worker);
      const tokens = await oidc.clientCredentialsGrant(config, {});
      const rows = await s.t.ctx.db.selectFrom('oauth_models').selectAll().execute();
      assert.ok(rows.length > 0);
      assert.ok(rows.every((r) => !r.payload.includes(tokens.access_token)));
      const hash = createHash('sha256').update(tokens.access_token).digest('base64url');
      assert.ok(rows.some((r) => r.id_hash === hash && r.model === 'ClientCredentials'));
      assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, true);
    });

    it('a wrong client secret is refused with invalid_client (RFC 6749), X-Request-Id still set', async () => {
      const res = await fetch(`${s.origin}/oauth2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${worker.client_id}:wrong`).toString('base64')}`,
          'x-request-id': 'oauth-test-1',
        },
        body: 'grant_type=client_credentials',
      });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('x-request-id'), 'oauth-test-1');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(((await res.json()) as { error: string }).error, 'invalid_client');
    });
  });
}
