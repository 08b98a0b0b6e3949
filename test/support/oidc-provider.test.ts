import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { type OidcHarness, startOidcProvider } from './oidc-provider.ts';

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  end_session_endpoint?: string;
  scopes_supported: string[];
}

async function discover(harness: OidcHarness): Promise<Discovery> {
  const res = await fetch(harness.discoveryUrl);
  assert.equal(res.status, 200);
  return (await res.json()) as Discovery;
}

describe('oidc-provider test harness', () => {
  let op: OidcHarness;

  before(async () => {
    op = await startOidcProvider({
      clientId: 'harness-client',
      accounts: {
        carol: { email: 'carol@example.com', email_verified: true, name: 'Carol Example' },
        dave: { email: 'dave@example.com', email_verified: false },
      },
    });
  });

  after(async () => {
    await op.stop();
  });

  it('listens on loopback and publishes a discovery document', async () => {
    assert.equal(op.issuer, `http://127.0.0.1:${op.port}`);
    assert.ok(op.port > 0);
    const discovery = await discover(op);
    assert.equal(discovery.issuer, op.issuer);
    for (const endpoint of [
      discovery.authorization_endpoint,
      discovery.token_endpoint,
      discovery.jwks_uri,
      discovery.end_session_endpoint,
    ]) {
      assert.ok(endpoint?.startsWith(`${op.issuer}/`), `${endpoint} is served by the issuer`);
    }
    for (const scope of ['openid', 'email', 'profile']) assert.ok(discovery.scopes_supported.includes(scope));
  });

  it('signs in twice as the same account: genuine ID tokens, same sub, nonce echoed', async () => {
    const { jwks_uri } = await discover(op);
    const keySet = createRemoteJWKSet(new URL(jwks_uri));

    const first = await op.signIn('carol', { nonce: 'nonce-one' });
    const second = await op.signIn('carol');
    assert.equal(first.nonce, 'nonce-one');
    assert.notEqual(second.nonce, first.nonce);
    assert.notEqual(second.idToken, first.idToken);

    for (const result of [first, second]) {
      const { payload, protectedHeader } = await jwtVerify(result.idToken, keySet, {
        issuer: op.issuer,
        audience: op.clientId,
        algorithms: ['RS256'],
      });
      assert.equal(protectedHeader.kid, op.privateSigningJwk().kid);
      assert.equal(payload.iss, op.issuer);
      assert.equal(payload.aud, 'harness-client');
      assert.equal(payload.nonce, result.nonce);
      assert.equal(payload.email, 'carol@example.com');
      assert.equal(payload.email_verified, true);
      assert.equal(payload.name, 'Carol Example');
      assert.deepEqual(result.claims, payload);
    }
    assert.equal(first.claims.sub, 'carol');
    assert.equal(second.claims.sub, first.claims.sub);
  });

  it('carries email_verified=false and omits claims outside the requested scope', async () => {
    const dave = await op.signIn('dave');
    assert.equal(dave.claims.sub, 'dave');
    assert.equal(dave.claims.email, 'dave@example.com');
    assert.equal(dave.claims.email_verified, false);

    const bare = await op.signIn('carol', { scope: 'openid' });
    assert.equal(bare.claims.sub, 'carol');
    assert.equal(bare.claims.email, undefined);
    assert.equal(bare.claims.name, undefined);
  });

  it('picks up accounts added or changed with setAccount', async () => {
    op.setAccount('erin', { email: 'erin@example.com', email_verified: false });
    assert.equal((await op.signIn('erin')).claims.email_verified, false);
    op.setAccount('erin', { email: 'erin@example.org', email_verified: true, name: 'Erin' });
    const { claims } = await op.signIn('erin');
    assert.equal(claims.sub, 'erin');
    assert.equal(claims.email, 'erin@example.org');
    assert.equal(claims.email_verified, true);
    assert.equal(claims.name, 'Erin');
  });

  it('rejects unknown accounts before contacting the provider', async () => {
    await assert.rejects(op.signIn('nobody'), /unknown account "nobody"/);
  });

  it('publishes exactly the public half of the signing key', async () => {
    const jwks = await op.jwks();
    const privateJwk = op.privateSigningJwk();
    assert.equal(jwks.keys.length, 1);
    const [published] = jwks.keys;
    assert.equal(published?.kid, privateJwk.kid);
    assert.equal(published?.n, privateJwk.n);
    assert.equal(published?.d, undefined);
    assert.equal(typeof privateJwk.d, 'string');
  });

  it('crafts tokens signed with the provider key that differ only where asked', async () => {
    const keySet = createLocalJWKSet(await op.jwks());
    const good = await op.craftIdToken({ sub: 'carol', nonce: 'n-1' });
    const { payload } = await jwtVerify(good, keySet, { issuer: op.issuer, audience: op.clientId });
    assert.equal(payload.email, 'carol@example.com');
    assert.equal(payload.nonce, 'n-1');

    const wrongAud = await op.craftIdToken({ sub: 'carol', aud: 'someone-else' });
    await assert.rejects(jwtVerify(wrongAud, keySet, { issuer: op.issuer, audience: op.clientId }), {
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });

    const noExp = await op.craftIdToken({ exp: undefined });
    const { payload: withoutExp } = await jwtVerify(noExp, keySet);
    assert.equal('exp' in withoutExp, false);
    assert.equal(withoutExp.sub, 'carol', 'default sub is the first account');
  });

  it('rotates the signing key on the same port', async () => {
    const before = op.privateSigningJwk().kid;
    await op.rotateSigningKey({ keepOld: true });
    const after = op.privateSigningJwk().kid;
    assert.notEqual(after, before);
    assert.deepEqual(
      (await op.jwks()).keys.map((k) => k.kid),
      [after, before],
    );
    const { idToken } = await op.signIn('carol');
    assert.equal(decodeProtectedHeader(idToken).kid, after);
  });

  it('stops (connections refused) and restarts on the same port with the same keys', async () => {
    const port = op.port;
    const kid = op.privateSigningJwk().kid;
    await op.stop();
    await op.stop();
    await assert.rejects(fetch(op.discoveryUrl), TypeError);

    await op.restart();
    assert.equal(op.port, port);
    const discovery = await discover(op);
    assert.equal(discovery.issuer, `http://127.0.0.1:${port}`);
    assert.ok((await op.jwks()).keys.some((k) => k.kid === kid));
    const { idToken } = await op.signIn('carol');
    const { payload } = await jwtVerify(idToken, createRemoteJWKSet(new URL(discovery.jwks_uri)), {
      issuer: op.issuer,
      audience: op.clientId,
    });
    assert.equal(payload.sub, 'carol');
  });

  it('routes provider notices into logs instead of the console', () => {
    assert.ok(op.logs.some((line) => line.includes('devInteractions')));
    assert.ok(op.logs.every((line) => !line.includes('server_error')));
  });
});

describe('oidc-provider test harness on a fixed port', () => {
  it('honours port and default accounts', async () => {
    const probe = await startOidcProvider();
    const port = probe.port;
    await probe.stop();

    const op = await startOidcProvider({ port, idTokenTtlS: 120 });
    try {
      assert.equal(op.issuer, `http://127.0.0.1:${port}`);
      const { claims } = await op.signIn('alice');
      assert.equal(claims.email_verified, true);
      assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 120);
      const bob = await op.signIn('bob');
      assert.equal(bob.claims.email_verified, false);
    } finally {
      await op.stop();
    }
  });
});
