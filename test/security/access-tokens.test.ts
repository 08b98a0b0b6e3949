import assert from 'node:assert/strict';
import { createPrivateKey, sign as cryptoSign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import { createAccessTokens } from '../../src/identity/tokens/access-tokens.ts';
import { ApiError } from '../../src/platform/api-error.ts';
import { buildTestApp, PUBLIC_URL, type TestApp } from '../helpers/app.ts';

// Access tokens are signed with node:crypto (bench: jose's WebCrypto jobs queued behind argon2 on
// the libuv pool) and verified with jose. These pin, for each algorithm, that tokens interoperate
// with jose both ways and that every header and claim rule refuses with the code and detail it had.

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return `${err.code}: ${err.detail}`;
  }
}

const SIGN_ARGS = { ES256: 'sha256', RS256: 'sha256', EdDSA: null } as const;

for (const alg of ['ES256', 'RS256', 'EdDSA'] as const)
  describe(`access tokens [${alg}]`, () => {
    let t: TestApp;
    let kid: string;
    let privateKey: KeyObject;
    let privateJwk: JWK;
    const tokens = () =>
      createAccessTokens(t.ctx.keys, { issuer: PUBLIC_URL, audience: PUBLIC_URL, ttlS: 900, cacheSize: 0 });
    const now = () => Math.floor(Date.now() / 1000);
    const good = () => ({
      iss: PUBLIC_URL,
      sub: 'user-1',
      aud: PUBLIC_URL,
      sid: 'session-1',
      role: 'user',
      iat: now(),
      exp: now() + 60,
      jti: 'jti-1',
    });
    // Signed by hand with the real key: jose would refuse to sign some of these headers.
    const forge = async (claims: Record<string, unknown>, header: Record<string, unknown> = {}) => {
      const part = (obj: object) => Buffer.from(JSON.stringify(obj)).toString('base64url');
      const input = `${part({ alg, kid, typ: 'at+jwt', ...header })}.${part(claims)}`;
      const key = { key: privateKey, dsaEncoding: 'ieee-p1363' as const };
      return `${input}.${cryptoSign(SIGN_ARGS[alg], Buffer.from(input), key).toString('base64url')}`;
    };

    before(async () => {
      t = await buildTestApp('sqlite', { env: { ACCESS_TOKEN_ALG: alg } });
      const row = await t.ctx.db.selectFrom('signing_keys').selectAll().executeTakeFirstOrThrow();
      kid = row.kid;
      privateJwk = JSON.parse(row.private_jwk) as JWK;
      privateKey = createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' });
    });
    after(() => t.destroy());

    it('signs tokens that jose verifies with the published JWKS', async () => {
      const { token, claims } = await tokens().sign({
        user: { id: 'u1', role: 'admin', email: 'ada@example.com', email_verified: 1 },
        session: { id: 's1', amr: ['pwd'], authTime: Date.now() - 5000 },
      });
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(t.ctx.keys.jwks()), {
        algorithms: [alg],
        issuer: PUBLIC_URL,
        audience: PUBLIC_URL,
        typ: 'at+jwt',
      });
      assert.deepEqual(payload, { ...claims });
      assert.deepEqual(protectedHeader, { alg, kid, typ: 'at+jwt' });
      assert.equal(payload.client_id, PUBLIC_URL);
      assert.deepEqual(payload.amr, ['pwd']);
      assert.equal(payload.email_verified, true);
      assert.ok(typeof payload.auth_time === 'number' && payload.auth_time <= (payload.iat as number));
    });

    it('verifies tokens jose signed, with typ written any way jose accepts', async () => {
      const joseKey = (await importJWK(privateJwk, alg)) as CryptoKey;
      const joseSigned = await new SignJWT(good())
        .setProtectedHeader({ alg, kid, typ: 'at+jwt' })
        .sign(joseKey);
      assert.equal(await outcome(tokens().verify(joseSigned)), 'ok');
      assert.equal(await outcome(tokens().verify(await forge(good()))), 'ok');
      assert.equal(await outcome(tokens().verify(await forge(good(), { typ: 'application/AT+JWT' }))), 'ok');
      assert.match(
        await outcome(tokens().verify(await forge({ ...good(), aud: [PUBLIC_URL] }))),
        /^token_invalid: /,
      );
      // docs/api.md §16: Gatehouse's own API takes only tokens whose aud is exactly PUBLIC_URL; a
      // list, even one holding it, is a token also meant for another service (confused deputy).
      assert.match(
        await outcome(tokens().verify(await forge({ ...good(), aud: ['x', PUBLIC_URL] }))),
        /^token_invalid: /,
      );
    });

    it('refuses what jose refuses, with the same codes', async () => {
      const v = async (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
        outcome(tokens().verify(await forge(claims, header)));
      const { exp: _exp, ...noExp } = good();
      assert.match(await v(good(), { typ: 'JWT' }), /^token_invalid: The token's typ claim/);
      assert.match(await v(good(), { crit: ['exp'], exp: 1 }), /^token_invalid: The token is malformed/);
      assert.match(await v({ ...good(), iss: 'http://evil' }), /^token_invalid: The token's iss claim/);
      assert.match(await v({ ...good(), aud: ['x'] }), /^token_invalid: The token's aud claim/);
      assert.match(await v(noExp), /^token_invalid: The token's exp claim/);
      assert.match(await v({ ...good(), exp: String(now() + 60) }), /^token_invalid: The token's exp claim/);
      assert.match(await v({ ...good(), nbf: now() + 60 }), /^token_invalid: The token's nbf claim/);
      assert.match(await v({ ...good(), exp: now() }), /^token_expired/);
      assert.match(await v({ ...good(), role: 'root' }), /^token_invalid: The token lacks Gatehouse claims/);
      const { sid: _sid, role: _role, ...foreign } = good();
      assert.match(await v(foreign), /^token_invalid: The token lacks Gatehouse claims/);
      // A resource's token (no sid, no role) is refused for its audience, not for a missing claim.
      assert.match(
        await v({ ...foreign, aud: 'https://api.example' }),
        /^token_invalid: The token's aud claim/,
      );
      assert.match(
        await v(good(), { kid: 'nope' }),
        /^token_invalid: The token was signed by an unknown key/,
      );
      assert.match(await v(good(), { kid: undefined }), /^token_invalid: The token has no kid/);
    });

    it('refuses other algorithms, altered tokens and non-base64url text', async () => {
      const token = await forge(good());
      const [h = '', p = '', s = ''] = token.split('.');
      const header = (obj: object) => Buffer.from(JSON.stringify(obj)).toString('base64url');
      const v = (text: string) => outcome(tokens().verify(text));
      assert.match(
        await v(`${header({ alg: 'none', kid, typ: 'at+jwt' })}.${p}.`),
        /algorithm that is not accepted/,
      );
      assert.match(
        await v(`${header({ alg: 'HS256', kid, typ: 'at+jwt' })}.${p}.${s}`),
        /algorithm that is not accepted/,
      );
      assert.match(await v(`${h}.${header({ ...good(), role: 'admin' })}.${s}`), /signature is not valid/);
      assert.match(await v(`${h}.${p}.${s.slice(0, -4)}`), /signature is not valid/);
      assert.match(await v(`${h}.${p}.${s}+`), /malformed/);
      assert.match(await v(`${h}.${p}`), /malformed/);
      assert.match(await v(`${h}.${p}.${s}.${s}`), /malformed/);
      assert.match(await v(`${header([1])}.${p}.${s}`), /malformed/);
    });
  });
