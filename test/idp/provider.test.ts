import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader, importJWK, SignJWT } from 'jose';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { idpEnv, postVerify, problem, tokenFromForeignKey } from '../helpers/idp.ts';
import { type OidcHarness, type SignInResult, startOidcProvider } from '../support/oidc-provider.ts';

interface Health {
  status: string;
  checks: Record<string, { status: string; keys?: number }>;
}

async function health(t: TestApp): Promise<{ code: number; body: Health }> {
  const res = await t.app.inject({ url: '/health/detailed' });
  return { code: res.statusCode, body: json<Health>(res) };
}

async function verify(t: TestApp, signIn: SignInResult) {
  return postVerify(t, { id_token: signIn.idToken, nonce: signIn.nonce });
}

function assertUnavailable(res: Awaited<ReturnType<typeof postVerify>>, op: OidcHarness): void {
  assert.equal(res.statusCode, 503, res.body);
  assert.equal(problem(res).code, 'idp_unavailable');
  assert.ok(res.headers['retry-after'], 'a 503 says when to retry');
  // No internals: neither the provider's address nor a low-level error leaks.
  assert.ok(!res.body.includes(String(op.port)), res.body);
  assert.ok(!/ECONNREFUSED|fetch failed/i.test(res.body), res.body);
}

for (const dialect of DIALECTS) {
  describe(`idp provider outages and key rotation [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;
    let earlySignIn: SignInResult;
    let secondSignIn: SignInResult;

    before(async () => {
      op = await startOidcProvider();
      earlySignIn = await op.signIn('alice');
      secondSignIn = await op.signIn('alice');
      await op.stop();
      // The app is built while the provider is down, so nothing about it is cached yet.
      t = await buildTestApp(dialect, { env: idpEnv(op) });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('answers 503 idp_unavailable while the provider is down (config, verify, health)', async () => {
      assertUnavailable(await t.app.inject({ url: '/api/v1/idp/config' }), op);
      assertUnavailable(await verify(t, earlySignIn), op);
      const { code, body } = await health(t);
      assert.equal(code, 503);
      assert.equal(body.status, 'degraded');
      assert.deepEqual(body.checks.idp, { status: 'error' });
      assert.equal(body.checks.database?.status, 'ok');
    });

    it('still refuses a bad token without the provider (alg is checked first)', async () => {
      const res = await postVerify(t, { id_token: 'eyJhbGciOiJub25lIn0.e30.' });
      assert.equal(res.statusCode, 401);
      assert.equal(problem(res).code, 'idp_token_invalid');
    });

    it('recovers by itself once the provider is back: no restart of the service', async () => {
      await op.restart();
      const config = await t.app.inject({ url: '/api/v1/idp/config' });
      assert.equal(config.statusCode, 200, config.body);
      const res = await verify(t, earlySignIn);
      assert.equal(res.statusCode, 200, res.body);
      const { code, body } = await health(t);
      assert.equal(code, 200);
      assert.deepEqual(body.checks.idp?.status, 'ok');
      assert.equal(body.checks.idp?.keys, 1);
    });

    it('keeps verifying with cached keys during an outage; a key it has not seen gives 503', async () => {
      await op.stop();
      const cached = await verify(t, secondSignIn);
      assert.equal(cached.statusCode, 200, cached.body);
      const config = await t.app.inject({ url: '/api/v1/idp/config' });
      assert.equal(config.statusCode, 200, 'the discovery document is cached');
      assertUnavailable(await postVerify(t, { id_token: await tokenFromForeignKey(op, 'new-kid') }), op);
      assert.equal((await health(t)).body.checks.idp?.status, 'error', 'health probes the provider live');

      await op.restart();
      const unknown = await postVerify(t, { id_token: await tokenFromForeignKey(op, 'new-kid') });
      assert.equal(unknown.statusCode, 401, 'with the provider back, an unknown key is the token’s fault');
      assert.equal(problem(unknown).code, 'idp_token_invalid');
    });

    it('verifies tokens signed with a rotated provider key (unknown kid → key set refetched)', async () => {
      const before = await op.signIn('alice');
      assert.equal((await verify(t, before)).statusCode, 200);
      const oldKey = op.privateSigningJwk();
      await op.rotateSigningKey();
      const after = await op.signIn('alice');
      assert.notEqual(decodeProtectedHeader(after.idToken).kid, decodeProtectedHeader(before.idToken).kid);
      const res = await verify(t, after);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json<{ created: boolean }>(res).created, false);
      // The old key is gone from the provider's set: what it signs no longer verifies.
      const stale = await new SignJWT({ sub: 'alice', email: 'alice@example.com', email_verified: true })
        .setProtectedHeader({ alg: 'RS256', kid: oldKey.kid! })
        .setIssuer(op.issuer)
        .setAudience(op.clientId)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(await importJWK(oldKey, 'RS256'));
      const refused = await postVerify(t, { id_token: stale });
      assert.equal(refused.statusCode, 401);
      assert.match(problem(refused).detail ?? '', /\(signature\)/);
    });
  });
}
