import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportSPKI, importJWK, type JWK, SignJWT } from 'jose';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { countFor, idpEnv, postVerify, problem, tokenFromForeignKey } from '../helpers/idp.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

const now = () => Math.floor(Date.now() / 1000);
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

for (const dialect of DIALECTS) {
  describe(`idp verify: crafted tokens are refused [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;
    let usersBefore: number;

    /** Asserts 401 idp_token_invalid naming `check`, with the token nowhere in the answer. */
    async function refused(token: string, check: string, nonce?: string): Promise<void> {
      const res = await postVerify(t, nonce === undefined ? { id_token: token } : { id_token: token, nonce });
      assert.equal(res.statusCode, 401, res.body);
      const body = problem(res);
      assert.equal(body.code, 'idp_token_invalid');
      assert.match(body.detail ?? '', new RegExp(`\\(${check}\\)`), body.detail);
      for (const part of token.split('.').filter((p) => p.length > 8)) {
        assert.ok(!res.body.includes(part), 'the response never echoes the token');
      }
    }

    /** Signs claims with the provider's own private key and a chosen header. */
    async function providerSigned(claims: Record<string, unknown>, header: Record<string, unknown>) {
      const jwk = op.privateSigningJwk();
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, ...header })
        .sign(await importJWK(jwk, 'RS256'));
    }

    const validClaims = () => ({
      iss: op.issuer,
      aud: op.clientId,
      sub: 'alice',
      iat: now(),
      exp: now() + 600,
      email: 'alice@example.com',
      email_verified: true,
    });

    before(async () => {
      op = await startOidcProvider();
      t = await buildTestApp(dialect, { env: idpEnv(op) });
      const res = await t.ctx.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      usersBefore = Number(res.n);
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('refuses a key the provider never published (unknown kid, and a known kid with another key)', async () => {
      await refused(await tokenFromForeignKey(op, 'kid-nobody-published'), 'signature');
      await refused(await tokenFromForeignKey(op, op.privateSigningJwk().kid!), 'signature');
    });

    it('refuses a wrong aud and a wrong iss', async () => {
      await refused(await op.craftIdToken({ aud: 'someone-else' }), 'aud');
      await refused(await op.craftIdToken({ iss: `${op.issuer}/other` }), 'iss');
      await refused(await op.craftIdToken({ iss: `${op.issuer}/` }), 'iss');
    });

    it('refuses expired, not-yet-valid and future-issued tokens; accepts 30 s of skew', async () => {
      await refused(await op.craftIdToken({ iat: now() - 7200, exp: now() - 3600 }), 'exp');
      await refused(await op.craftIdToken({ nbf: now() + 600 }), 'nbf');
      await refused(await op.craftIdToken({ iat: now() + 600, exp: now() + 1200 }), 'iat');
      await refused(await op.craftIdToken({ exp: undefined }), 'exp');
      const skewed = await postVerify(t, {
        id_token: await op.craftIdToken({ iat: now() - 600, exp: now() - 30 }),
      });
      assert.equal(skewed.statusCode, 200, skewed.body);
    });

    it('checks the nonce: wrong, left out when the token has one, or absent from the token', async () => {
      const { idToken, nonce } = await op.signIn('alice');
      await refused(idToken, 'nonce', `${nonce}-not`);
      await refused(idToken, 'nonce');
      await refused(await op.craftIdToken(), 'nonce', 'a-nonce-the-token-lacks');
      const ok = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('refuses alg none', async () => {
      const claims = validClaims();
      await refused(`${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`, 'alg');
      await refused(`${b64url({ alg: 'none', kid: op.privateSigningJwk().kid })}.${b64url(claims)}.`, 'alg');
    });

    it("refuses HS256 signed with the provider's public key as the secret (JWK and PEM)", async () => {
      const published = (await op.jwks()).keys[0] as JWK;
      const asJwkText = new TextEncoder().encode(JSON.stringify(published));
      const asPem = new TextEncoder().encode(
        await exportSPKI((await importJWK(published, 'RS256', { extractable: true })) as CryptoKey),
      );
      for (const secret of [asJwkText, asPem]) {
        const token = await new SignJWT(validClaims())
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: published.kid })
          .sign(secret);
        await refused(token, 'alg');
      }
    });

    it('checks azp: another party, or several audiences without azp', async () => {
      await refused(
        await op.craftIdToken({ aud: [op.clientId, 'other-client'], azp: 'other-client' }),
        'azp',
      );
      await refused(await op.craftIdToken({ aud: [op.clientId, 'other-client'] }), 'azp');
      await refused(await op.craftIdToken({ azp: 'other-client' }), 'azp');
      const ok = await postVerify(t, {
        id_token: await op.craftIdToken({ aud: [op.clientId, 'other-client'], azp: op.clientId }),
      });
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('refuses access tokens and logout tokens (typ), malformed input and a missing sub', async () => {
      await refused(await providerSigned(validClaims(), { typ: 'at+jwt' }), 'typ');
      await refused(await providerSigned(validClaims(), { typ: 'application/at+jwt' }), 'typ');
      await refused(await providerSigned(validClaims(), { typ: 'logout+jwt' }), 'typ');
      await refused('not-a-jwt', 'format');
      await refused('a.b.c.d.e', 'format');
      await refused('eyJub3QganNvbg.e30.AAAA', 'format');
      const { sub: _sub, ...noSub } = validClaims();
      await refused(await providerSigned(noSub, { typ: 'JWT' }), 'sub');
    });

    it('refuses a tampered payload', async () => {
      const genuine = await op.craftIdToken();
      const [header, , signature] = genuine.split('.');
      await refused(`${header}.${b64url({ ...validClaims(), sub: 'mallory' })}.${signature}`, 'signature');
    });

    it('wrote no user for any refusal', async () => {
      const res = await t.ctx.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      // The accepted tokens above (skew, nonce, azp) all sign in alice: one account at most.
      assert.ok(Number(res.n) <= usersBefore + 1);
      assert.deepEqual(await countFor(t, 'mallory@example.com', 'mallory'), { users: 0, identities: 0 });
      const identities = await t.ctx.db.selectFrom('identities').select('subject').execute();
      assert.deepEqual(
        identities.map((i) => i.subject),
        ['alice'],
      );
      assert.equal(json(await t.app.inject({ url: '/health' })).status, 'ok');
    });
  });
}
