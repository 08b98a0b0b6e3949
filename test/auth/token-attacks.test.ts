import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  base64url,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTHeaderParameters,
  jwtVerify,
  SignJWT,
  UnsecuredJWT,
} from 'jose';
import { v7 as uuidv7 } from 'uuid';
import { rotateSigningKey } from '../../src/identity/tokens/signing-keys.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

type Claims = Record<string, unknown>;

// Every attack against each signing algorithm Gatehouse offers (docs/api.md §14): the default ES256,
// RS256, and EdDSA (the algorithm of databases created before ES256 became the default).
const ALGS = ['ES256', 'RS256', 'EdDSA'] as const;
const KTY = { ES256: 'EC', RS256: 'RSA', EdDSA: 'OKP' } as const;

for (const dialect of DIALECTS)
  for (const alg of ALGS) {
    // Another asymmetric algorithm than the key's, signed with a valid key of its own.
    const otherAlg = alg === 'ES256' ? 'EdDSA' : 'ES256';
    describe(`access token attacks on verify-token [${dialect}, ${alg}]`, () => {
      let t: TestApp;
      let user: UserRow;
      let sessionId: string;
      let realKid: string;
      let realPrivate: CryptoKey | Uint8Array;
      let realPublicJwk: JWK;
      let goodToken: string;

      const verify = (token: string) =>
        t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${token}` } });

      /** Valid claims for the test user's live session; override any. */
      const claims = (overrides: Claims = {}): Claims => {
        const now = Math.floor(Date.now() / 1000);
        return {
          iss: PUBLIC_URL,
          aud: PUBLIC_URL,
          sub: user.id,
          sid: sessionId,
          role: 'user',
          jti: uuidv7(),
          iat: now,
          exp: now + 600,
          ...overrides,
        };
      };

      const sign = (
        payload: Claims,
        header: JWTHeaderParameters,
        key: CryptoKey | Uint8Array = realPrivate,
      ) => new SignJWT(payload).setProtectedHeader(header).sign(key);

      /** The refusal every forged token must get: 401 with the code and an RFC 6750 challenge. */
      const assertRefused = async (token: string, code = 'token_invalid') => {
        const res = await verify(token);
        assert.equal(res.statusCode, 401, res.body);
        assert.equal(json(res).code, code);
        assert.match(
          String(res.headers['www-authenticate']),
          /^Bearer realm="gatehouse", error="invalid_token"/,
        );
      };

      before(async () => {
        t = await buildTestApp(dialect, { env: { ACCESS_TOKEN_ALG: alg } });
        user = await createUser(t);
        const tokens = await sessionFor(t, user);
        goodToken = tokens.access_token;
        sessionId = json<{ session_id: string }>(await verify(goodToken)).session_id;
        const row = await t.ctx.db.selectFrom('signing_keys').selectAll().executeTakeFirstOrThrow();
        realKid = row.kid;
        realPrivate = await importJWK(JSON.parse(row.private_jwk) as JWK, alg);
        realPublicJwk = JSON.parse(row.public_jwk) as JWK;
      });
      after(() => t.destroy());

      it('accepts a token forged correctly with the real key (the baseline the attacks vary)', async () => {
        const token = await sign(claims(), { alg, typ: 'at+jwt', kid: realKid });
        assert.equal((await verify(token)).statusCode, 200);
      });

      it('refuses alg "none"', async () => {
        await assertRefused(new UnsecuredJWT(claims()).encode());
        const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: realKid }));
        const payload = base64url.encode(JSON.stringify(claims()));
        await assertRefused(`${header}.${payload}.`);
        const signature = goodToken.split('.')[2];
        await assertRefused(`${header}.${payload}.${signature}`);
        const shouted = base64url.encode(JSON.stringify({ alg: 'NONE', typ: 'at+jwt', kid: realKid }));
        await assertRefused(`${shouted}.${payload}.`);
      });

      it('refuses HS256 signed with a guessed secret', async () => {
        for (const secret of ['secret', 'gatehouse', PUBLIC_URL]) {
          const key = new TextEncoder().encode(secret);
          await assertRefused(await sign(claims(), { alg: 'HS256', typ: 'at+jwt', kid: realKid }, key));
        }
      });

      it('refuses HS256 signed with the public key as the secret (algorithm confusion)', async () => {
        const asJson = new TextEncoder().encode(JSON.stringify(realPublicJwk));
        const asRaw = base64url.decode(String(realPublicJwk.x ?? realPublicJwk.n));
        for (const key of [asJson, asRaw]) {
          await assertRefused(await sign(claims(), { alg: 'HS256', typ: 'at+jwt', kid: realKid }, key));
        }
      });

      it('refuses a tampered payload', async () => {
        const [header, , signature] = goodToken.split('.');
        const payload = base64url.encode(JSON.stringify(claims({ role: 'admin' })));
        await assertRefused(`${header}.${payload}.${signature}`);
      });

      it('answers token_expired for an expired token signed with the real key', async () => {
        const past = Math.floor(Date.now() / 1000) - 3600;
        const token = await sign(claims({ iat: past - 900, exp: past }), {
          alg,
          typ: 'at+jwt',
          kid: realKid,
        });
        await assertRefused(token, 'token_expired');
      });

      it('refuses a wrong issuer or audience', async () => {
        const header = { alg, typ: 'at+jwt', kid: realKid };
        await assertRefused(await sign(claims({ iss: 'http://evil.test' }), header));
        await assertRefused(await sign(claims({ iss: `${PUBLIC_URL}/` }), header));
        await assertRefused(await sign(claims({ aud: 'http://other-service.test' }), header));
        await assertRefused(await sign(claims({ aud: ['http://other-service.test'] }), header));
      });

      it('refuses another token type: typ JWT, no typ, an ID-token-like token', async () => {
        await assertRefused(await sign(claims(), { alg, typ: 'JWT', kid: realKid }));
        await assertRefused(await sign(claims(), { alg, kid: realKid }));
        const idToken = claims({
          aud: 'some-client-id',
          nonce: 'n-0S6_WzA2Mj',
          auth_time: 1,
          email: user.email,
        });
        await assertRefused(await sign(idToken, { alg, typ: 'JWT', kid: realKid }));
        await assertRefused(await sign(claims(), { alg, typ: 'id+jwt', kid: realKid }));
      });

      it('refuses an unknown kid, a missing kid, and kids carrying paths or SQL', async () => {
        const payload = claims();
        for (const kid of [
          'no-such-key',
          '../../../../etc/passwd',
          "x' OR '1'='1",
          '"; drop table users; --',
          '',
        ]) {
          await assertRefused(await sign(payload, { alg, typ: 'at+jwt', kid }));
        }
        await assertRefused(await sign(payload, { alg, typ: 'at+jwt' }));
        // The tables survived the SQL-looking kid.
        assert.ok(await t.ctx.db.selectFrom('users').select('id').executeTakeFirst());
      });

      it('ignores jwk, jku and x5u headers: an attacker key announced in the token is never used', async () => {
        const attacker = await generateKeyPair(alg, { extractable: true });
        const jwk = { ...(await exportJWK(attacker.publicKey)), kid: 'attacker' };
        const embedded = {
          alg,
          typ: 'at+jwt',
          jwk,
          jku: 'http://127.0.0.1:9/jwks.json',
          x5u: 'http://127.0.0.1:9/cert',
        };
        await assertRefused(await sign(claims(), { ...embedded, kid: 'attacker' }, attacker.privateKey));
        await assertRefused(await sign(claims(), { ...embedded, kid: realKid }, attacker.privateKey));
        // And the real key's token with such headers verifies as usual: the headers change nothing.
        const fine = await sign(claims(), {
          alg,
          typ: 'at+jwt',
          kid: realKid,
          jku: 'http://127.0.0.1:9/x',
        });
        assert.equal((await verify(fine)).statusCode, 200);
      });

      it('refuses other asymmetric algorithms even with a valid signature from their own key', async () => {
        const other = await generateKeyPair(otherAlg);
        await assertRefused(
          await sign(claims(), { alg: otherAlg, typ: 'at+jwt', kid: realKid }, other.privateKey),
        );
      });

      it('refuses tokens missing Gatehouse claims or carrying an unknown role', async () => {
        const header = { alg, typ: 'at+jwt', kid: realKid };
        for (const missing of ['sid', 'jti', 'sub', 'exp', 'iat']) {
          const payload = claims();
          delete payload[missing];
          await assertRefused(await sign(payload, header));
        }
        await assertRefused(await sign(claims({ role: 'superadmin' }), header));
      });

      it('answers session_revoked for a well-signed token whose session is unknown or another user’s', async () => {
        const header = { alg, typ: 'at+jwt', kid: realKid };
        await assertRefused(await sign(claims({ sid: uuidv7() }), header), 'session_revoked');
        const other = await createUser(t);
        await assertRefused(await sign(claims({ sub: other.id }), header), 'session_revoked');
      });

      it('refuses malformed Authorization headers and garbage tokens', async () => {
        for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b', `Token ${goodToken}`]) {
          const res = await t.app.inject({ url: '/api/v1/verify-token', headers: { authorization } });
          assert.equal(res.statusCode, 401, authorization);
          assert.equal(json(res).code, 'token_invalid');
        }
        await assertRefused('not.a.jwt');
        await assertRefused(goodToken.split('.').slice(0, 2).join('.'));
      });

      it('publishes public keys only, and they verify issued tokens with jose', async () => {
        const res = await t.app.inject({ url: '/.well-known/jwks.json' });
        assert.equal(res.statusCode, 200);
        const jwks = json<{ keys: JWK[] }>(res);
        assert.ok(jwks.keys.length >= 1);
        for (const key of jwks.keys) {
          assert.equal(key.d, undefined);
          assert.equal(key.kty, KTY[alg]);
          assert.equal(key.alg, alg);
          for (const part of ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const) assert.equal(key[part], undefined);
          assert.equal(typeof key.kid, 'string');
        }
        const { payload, protectedHeader } = await jwtVerify(goodToken, createLocalJWKSet(jwks), {
          issuer: PUBLIC_URL,
          audience: PUBLIC_URL,
          typ: 'at+jwt',
          algorithms: [alg],
        });
        assert.equal(payload.sub, user.id);
        assert.equal(payload.sid, sessionId);
        assert.equal(protectedHeader.kid, realKid);
      });

      it('after rotate-keys, new tokens use the new key and old ones keep verifying, both via the JWKS', async () => {
        const newKid = await rotateSigningKey(t.ctx.db, alg);
        await t.ctx.keys.reload();
        const fresh = await sessionFor(t, user);
        const jwks = json<{ keys: JWK[] }>(await t.app.inject({ url: '/.well-known/jwks.json' }));
        assert.deepEqual(jwks.keys.map((k) => k.kid).sort(), [newKid, realKid].sort());
        const set = createLocalJWKSet(jwks);
        const options = { issuer: PUBLIC_URL, audience: PUBLIC_URL, typ: 'at+jwt', algorithms: [alg] };
        assert.equal((await jwtVerify(fresh.access_token, set, options)).protectedHeader.kid, newKid);
        assert.equal((await jwtVerify(goodToken, set, options)).protectedHeader.kid, realKid);
        assert.equal((await verify(goodToken)).statusCode, 200);
        assert.equal((await verify(fresh.access_token)).statusCode, 200);
      });
    });
  }
