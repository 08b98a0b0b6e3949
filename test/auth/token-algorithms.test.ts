import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JWK, jwtVerify } from 'jose';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

// docs/api.md §14: ACCESS_TOKEN_ALG, the RFC 9068 claims, and the discovery documents.

interface Tokens {
  access_token: string;
  refresh_token: string;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const ALL = ['ES256', 'RS256', 'EdDSA'];

async function login(t: TestApp): Promise<Tokens> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/login',
    payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  });
  assert.equal(res.statusCode, 200, res.body);
  return json<Tokens>(res);
}

const verifyToken = (t: TestApp, token: string) =>
  t.app.inject({ url: '/api/v1/verify-token', headers: bearer(token) });

const jwksOf = async (t: TestApp) =>
  json<{ keys: JWK[] }>(await t.app.inject({ url: '/.well-known/jwks.json' }));

/** What a stateless resource server does: verify with the published JWKS only. */
async function verifiesLocally(t: TestApp, token: string) {
  return jwtVerify(token, createLocalJWKSet(await jwksOf(t)), {
    issuer: PUBLIC_URL,
    audience: PUBLIC_URL,
    typ: 'at+jwt',
    algorithms: ALL,
  });
}

for (const dialect of DIALECTS) {
  describe(`access token algorithms [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('signs with ES256 by default and carries the RFC 9068 claims plus amr, email, email_verified', async () => {
      const { access_token } = await login(t);
      assert.equal(decodeProtectedHeader(access_token).alg, 'ES256');
      const { payload } = await verifiesLocally(t, access_token);
      for (const claim of ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id', 'auth_time']) {
        assert.ok(payload[claim] !== undefined, `missing ${claim}`);
      }
      assert.equal(payload.client_id, PUBLIC_URL);
      assert.deepEqual(payload.amr, ['pwd']);
      assert.equal(payload.email, ADMIN_EMAIL);
      assert.equal(typeof payload.email_verified, 'boolean');
      const body = json<{ claims: Record<string, unknown> }>(await verifyToken(t, access_token));
      assert.deepEqual(body.claims, payload, 'verify-token returns every claim of the token');
    });

    it('keeps amr and auth_time across refreshes (they belong to the session)', async () => {
      const first = await login(t);
      const before = decodeJwt(first.access_token);
      // auth_time is in seconds: wait for the next second so a fresh value would differ.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        payload: { refresh_token: first.refresh_token },
      });
      assert.equal(res.statusCode, 200, res.body);
      const after = decodeJwt(json<Tokens>(res).access_token);
      assert.equal(after.auth_time, before.auth_time);
      assert.deepEqual(after.amr, before.amr);
      assert.ok((after.iat as number) > (before.auth_time as number));
    });

    it('serves RFC 8414 and OpenID discovery: the tokens’ issuer, the JWKS, no endpoint it lacks, cacheable', async () => {
      const { access_token } = await login(t);
      const { iss } = decodeJwt(access_token);
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const res = await t.app.inject({ url: path });
        assert.equal(res.statusCode, 200, path);
        assert.match(String(res.headers['cache-control']), /^public, max-age=\d+$/);
        const doc = json<Record<string, unknown>>(res);
        assert.equal(doc.issuer, iss);
        assert.equal(doc.jwks_uri, `${PUBLIC_URL}/.well-known/jwks.json`);
        assert.deepEqual(doc.response_types_supported, []);
        const advertised = Object.keys(doc).filter((k) => k.endsWith('_endpoint'));
        assert.deepEqual(advertised, [], `${path} advertises no endpoint Gatehouse does not serve`);
        if (path.endsWith('openid-configuration')) {
          assert.deepEqual(doc.subject_types_supported, ['public']);
          const algs = new Set((await jwksOf(t)).keys.map((k) => k.alg));
          assert.deepEqual(new Set(doc.id_token_signing_alg_values_supported as string[]), algs);
        }
      }
      const index = await t.app.inject({ url: '/' });
      assert.doesNotMatch(index.body, /well-known/, 'the discovery documents are not listed in the index');
    });

    it('switching ACCESS_TOKEN_ALG on a running database keeps a token in flight verifying, nothing flip-flops', async () => {
      // The instance that runs first signs EdDSA (the only algorithm before ES256 became the default).
      const old = await t.restart({ ACCESS_TOKEN_ALG: 'EdDSA' });
      try {
        const inFlight = await login(old);
        assert.equal(decodeProtectedHeader(inFlight.access_token).alg, 'EdDSA');

        // A rolling change: another instance starts with RS256 while the EdDSA one still runs.
        const next = await t.restart({ ACCESS_TOKEN_ALG: 'RS256' });
        try {
          assert.equal((await verifyToken(next, inFlight.access_token)).statusCode, 200);
          assert.equal((await verifiesLocally(next, inFlight.access_token)).protectedHeader.alg, 'EdDSA');
          const fresh = await login(next);
          assert.equal(decodeProtectedHeader(fresh.access_token).alg, 'RS256');
          assert.equal((await verifyToken(old, fresh.access_token)).statusCode, 200);

          // The session in flight refreshes on the new instance into an RS256 token of the same session.
          const res = await next.app.inject({
            method: 'POST',
            url: '/api/v1/refresh-token',
            payload: { refresh_token: inFlight.refresh_token },
          });
          assert.equal(res.statusCode, 200, res.body);
          const refreshed = json<Tokens>(res).access_token;
          assert.equal(decodeProtectedHeader(refreshed).alg, 'RS256');
          assert.equal(decodeJwt(refreshed).sid, decodeJwt(inFlight.access_token).sid);

          // Both keep signing with their own algorithm through reloads; the key count settles.
          for (let round = 0; round < 3; round++) {
            await old.ctx.keys.reload();
            await next.ctx.keys.reload();
          }
          const settled = (await t.ctx.db.selectFrom('signing_keys').select('kid').execute()).length;
          await old.ctx.keys.reload();
          await next.ctx.keys.reload();
          assert.equal((await t.ctx.db.selectFrom('signing_keys').select('kid').execute()).length, settled);
          const fromOld = await login(old);
          const fromNext = await login(next);
          assert.equal(decodeProtectedHeader(fromOld.access_token).alg, 'EdDSA');
          assert.equal(decodeProtectedHeader(fromNext.access_token).alg, 'RS256');
          // Each instance's JWKS serves both algorithms, so any verifier accepts either token.
          for (const instance of [old, next]) {
            for (const token of [fromOld.access_token, fromNext.access_token, inFlight.access_token]) {
              assert.equal((await verifyToken(instance, token)).statusCode, 200);
              await verifiesLocally(instance, token);
            }
          }
        } finally {
          await next.close();
        }
      } finally {
        await old.close();
      }
    });

    it('ACCESS_TOKEN_CLIENT_ID sets the client_id claim', async () => {
      const other = await t.restart({ ACCESS_TOKEN_CLIENT_ID: 'gatehouse-web' });
      try {
        const { access_token } = await login(other);
        assert.equal(decodeJwt(access_token).client_id, 'gatehouse-web');
        assert.equal((await verifyToken(other, access_token)).statusCode, 200);
      } finally {
        await other.close();
      }
    });
  });
}
