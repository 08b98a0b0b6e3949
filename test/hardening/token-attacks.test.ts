import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  base64url,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTHeaderParameters,
  SignJWT,
} from 'jose';
import { v7 as uuidv7 } from 'uuid';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { domainState } from '../helpers/hardening.ts';
import { idpEnv, postVerify } from '../helpers/idp.ts';
import { createUser, sessionFor } from '../helpers/users.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

/*
 * Access-token attacks beyond test/auth/token-attacks.test.ts (which covers alg none, HS256 with
 * guessed secrets and the public key, tampering, expiry, iss/aud, typ, unknown and SQL-ish kids,
 * embedded keys pointing nowhere): attacker key servers that must never be contacted, kids of
 * every shape, nbf, truncation, foreign keys with our kid, another instance's tokens, a real
 * provider's ID token as an access token and our access token as an ID token, and claims the
 * database overrules.
 * Run with EdDSA keys: several attacks are Ed25519-specific (the fully-specified `Ed25519` alg
 * name, raw Ed25519 signatures); test/auth/token-attacks.test.ts runs its set on every algorithm.
 */
const HARDENING_ENV = { ACCESS_TOKEN_ALG: 'EdDSA' };
type Claims = Record<string, unknown>;
const now = () => Math.floor(Date.now() / 1000);

for (const dialect of DIALECTS) {
  describe(`token attacks, continued [${dialect}]`, () => {
    let t: TestApp;
    let op: OidcHarness;
    let user: UserRow;
    let sessionId: string;
    let realKid: string;
    let realKey: CryptoKey | Uint8Array;
    let goodToken: string;
    let attackerServer: Server;
    let attackerHits = 0;
    let attackerUrl = '';
    let attacker: { privateKey: CryptoKey; jwk: JWK };

    const verify = (token: string, url = '/api/v1/verify-token') =>
      t.app.inject({ url, headers: { authorization: `Bearer ${token}` } });

    const claims = (overrides: Claims = {}): Claims => ({
      iss: PUBLIC_URL,
      aud: PUBLIC_URL,
      sub: user.id,
      sid: sessionId,
      role: 'user',
      jti: uuidv7(),
      iat: now(),
      exp: now() + 600,
      ...overrides,
    });

    const sign = (
      payload: Claims,
      header: Partial<JWTHeaderParameters>,
      key: CryptoKey | Uint8Array = realKey,
    ) => new SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', ...header }).sign(key);

    /** 401 with the code and an RFC 6750 challenge naming invalid_token. */
    const assertRefused = async (token: string, code = 'token_invalid', url?: string) => {
      const res = await verify(token, url);
      assert.equal(res.statusCode, 401, `${token.slice(0, 60)}… → ${res.body}`);
      assert.equal(json(res).code, code);
      assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
    };

    before(async () => {
      // The attacker's key server: a JWKS (and a "certificate") with the attacker's public key.
      const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
      attacker = { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), alg: 'EdDSA' } };
      attackerServer = createServer((_req, res) => {
        attackerHits++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: [attacker.jwk] }));
      });
      await new Promise<void>((resolve) => attackerServer.listen(0, '127.0.0.1', resolve));
      attackerUrl = `http://127.0.0.1:${(attackerServer.address() as AddressInfo).port}`;

      op = await startOidcProvider();
      t = await buildTestApp(dialect, { env: { ...idpEnv(op), ...HARDENING_ENV } });
      user = await createUser(t, { email: 'victim@example.com' });
      goodToken = (await sessionFor(t, user)).access_token;
      sessionId = json<{ session_id: string }>(await verify(goodToken)).session_id;
      const row = await t.ctx.db.selectFrom('signing_keys').selectAll().executeTakeFirstOrThrow();
      realKid = row.kid;
      realKey = await importJWK(JSON.parse(row.private_jwk) as JWK, 'EdDSA');
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
      await new Promise((resolve) => attackerServer?.close(resolve));
    });

    it('accepts the baseline: our key, our kid, valid claims', async () => {
      assert.equal((await verify(await sign(claims(), { kid: realKid }))).statusCode, 200);
    });

    it('never fetches keys from jku, x5u or jwk headers that point at a live attacker server', async () => {
      const embedded = {
        jku: `${attackerUrl}/jwks.json`,
        x5u: `${attackerUrl}/cert.pem`,
        jwk: { ...attacker.jwk, kid: 'attacker' },
        x5c: ['MIIBattacker'],
      };
      for (const kid of ['attacker', realKid, undefined]) {
        const token = await sign(
          claims({ role: 'admin' }),
          { ...embedded, ...(kid ? { kid } : {}) },
          attacker.privateKey,
        );
        await assertRefused(token);
        await assertRefused(token, 'token_invalid', '/api/v1/profile');
      }
      assert.equal(attackerHits, 0, 'the attacker key server was never contacted');
    });

    it('refuses a token re-signed by a foreign key under our kid', async () => {
      const foreign = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
      await assertRefused(await sign(claims(), { kid: realKid }, foreign.privateKey));
      // The same with the real token's header and payload kept byte for byte.
      const [header, payload] = goodToken.split('.');
      const resigned = await sign(
        JSON.parse(new TextDecoder().decode(base64url.decode(payload ?? ''))),
        {
          ...(JSON.parse(new TextDecoder().decode(base64url.decode(header ?? ''))) as JWTHeaderParameters),
        },
        foreign.privateKey,
      );
      await assertRefused(resigned);
    });

    it('refuses tokens of another Gatehouse instance (its own keys, same issuer and audience)', async () => {
      const other = await buildTestApp(dialect, { env: HARDENING_ENV });
      try {
        const stranger = await createUser(other, { email: 'victim@example.com' });
        const theirs = (await sessionFor(other, stranger)).access_token;
        await assertRefused(theirs);
      } finally {
        await other.destroy();
      }
    });

    it('refuses kids of every shape: NUL, 10 kB, non-strings, case changes, suffixes, file paths with HS256', async () => {
      const payload = claims();
      for (const kid of [
        `${realKid}\u0000`,
        'k'.repeat(10_240),
        realKid.toUpperCase(),
        `${realKid}' OR '1'='1`,
        ` ${realKid}`,
        `${realKid}/../${realKid}`,
      ]) {
        await assertRefused(await sign(payload, { kid }));
      }
      for (const kid of [42, null, [realKid], { kid: realKid }]) {
        const header = base64url.encode(JSON.stringify({ alg: 'EdDSA', typ: 'at+jwt', kid }));
        const [, body, signature] = goodToken.split('.');
        await assertRefused(`${header}.${body}.${signature}`);
      }
      // kid naming a file whose content is known (empty), HMAC-signed with that content.
      for (const kid of ['/dev/null', '../../../../../../dev/null']) {
        const header = base64url.encode(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid }));
        const body = base64url.encode(JSON.stringify(payload));
        const mac = createHmac('sha256', '').update(`${header}.${body}`).digest('base64url');
        await assertRefused(`${header}.${body}.${mac}`);
      }
    });

    it('refuses a token whose nbf is in the future, even signed with our key (jose checks nbf)', async () => {
      await assertRefused(await sign(claims({ nbf: now() + 3600 }), { kid: realKid }));
      await assertRefused(await sign(claims({ nbf: now() + 120 }), { kid: realKid }));
      // A past nbf is merely redundant.
      assert.equal((await verify(await sign(claims({ nbf: now() - 10 }), { kid: realKid }))).statusCode, 200);
    });

    it('refuses the fully-specified Ed25519 alg name and unknown critical headers, even with our key', async () => {
      await assertRefused(
        await new SignJWT(claims())
          .setProtectedHeader({ alg: 'Ed25519', typ: 'at+jwt', kid: realKid })
          .sign(realKey),
      );
      // Signed by hand, so the same bytes can be sent with and without the critical header.
      const handSigned = async (header: Record<string, unknown>) => {
        const h = base64url.encode(JSON.stringify(header));
        const b = base64url.encode(JSON.stringify(claims()));
        const data = new TextEncoder().encode(`${h}.${b}`);
        const sig = await crypto.subtle.sign('Ed25519', realKey as CryptoKey, data);
        return `${h}.${b}.${base64url.encode(new Uint8Array(sig))}`;
      };
      const plain = { alg: 'EdDSA', typ: 'at+jwt', kid: realKid };
      assert.equal((await verify(await handSigned(plain))).statusCode, 200, 'the hand-signed control passes');
      await assertRefused(await handSigned({ ...plain, crit: ['exp-ext'], 'exp-ext': 1 }));
      await assertRefused(await handSigned({ ...plain, crit: ['b64'], b64: false }));
    });

    it('refuses truncated and re-segmented tokens', async () => {
      const [header = '', payload = '', signature = ''] = goodToken.split('.');
      for (const token of [
        goodToken.slice(0, -1),
        goodToken.slice(0, -10),
        `${header}.${payload}.${signature.slice(0, signature.length / 2)}`,
        `${header}.${payload}`,
        `${header}.${payload}.`,
        `${header}..${signature}`,
        `.${payload}.${signature}`,
        `${header}`,
        `${goodToken}.`,
        `${goodToken}.${signature}`,
        `${header}.${payload}.${signature}.${payload}.${signature}`,
        goodToken.slice(1),
      ]) {
        await assertRefused(token);
      }
    });

    it("refuses the real provider's ID token as an access token, before and after it signed someone in", async () => {
      const { idToken, nonce } = await op.signIn('alice');
      await assertRefused(idToken);
      await assertRefused(idToken, 'token_invalid', '/api/v1/profile');
      const signIn = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(signIn.statusCode, 200, signIn.body);
      // Alice now has an account, and still her ID token opens nothing here.
      await assertRefused(idToken);
    });

    it('refuses a Gatehouse access token at idp/verify, creating nothing', async () => {
      const before = await domainState(t);
      for (const token of [
        goodToken,
        await sign(claims({ aud: op.clientId, iss: op.issuer }), { kid: realKid, typ: 'JWT' }),
      ]) {
        const res = await postVerify(t, { id_token: token });
        assert.equal(res.statusCode, 401, res.body);
        assert.equal(json(res).code, 'idp_token_invalid');
      }
      assert.equal(await domainState(t), before);
    });

    it('never trusts the token for the role: a token saying admin for a user is refused everywhere (401, refresh), never admitted to admin endpoints', async () => {
      const forged = await sign(claims({ role: 'admin' }), { kid: realKid });
      const verified = await verify(forged);
      assert.equal(verified.statusCode, 401, verified.body);
      assert.equal(json(verified).code, 'token_invalid');
      const res = await t.app.inject({
        url: '/api/v1/admin/modules',
        headers: { authorization: `Bearer ${forged}` },
      });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(json(res).code, 'token_invalid');
    });

    it('accepts the token only in the Authorization header: never from the query string or a refresh token', async () => {
      const query = await t.app.inject({ url: `/api/v1/verify-token?access_token=${goodToken}` });
      assert.equal(query.statusCode, 401);
      assert.equal(json(query).code, 'unauthenticated');
      const { refresh_token } = await sessionFor(t, user);
      await assertRefused(refresh_token);
    });
  });
}
