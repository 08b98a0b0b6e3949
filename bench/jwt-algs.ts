// Token signature algorithms compared on this machine (docs/api.md §14): per algorithm, verifications per
// second of one access token through jose's jwtVerify (as src/identity/tokens/access-tokens.ts verifies,
// WebCrypto, async) and through node:crypto's one-shot verify, and node:crypto signatures per second
// (as the service signs). Pinned like the service by bench/run.ts.
import { createPrivateKey, createPublicKey, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';

const [durationS = 1] = process.argv.slice(2).map(Number);

async function opsPerSecond(fn: () => unknown): Promise<number> {
  for (let i = 0; i < 200; i++) await fn();
  let n = 0;
  const end = performance.now() + durationS * 1000;
  const start = performance.now();
  while (performance.now() < end) {
    for (let i = 0; i < 50; i++) await fn();
    n += 50;
  }
  return n / ((performance.now() - start) / 1000);
}

type Alg = 'ES256' | 'RS256' | 'EdDSA';

async function measure(alg: Alg) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ sid: 'bench-session', role: 'user', client_id: 'http://bench' })
    .setProtectedHeader({ alg, kid: 'k1', typ: 'at+jwt' })
    .setIssuer('http://bench')
    .setSubject('bench-user')
    .setAudience('http://bench')
    .setIssuedAt(now)
    .setExpirationTime(now + 900)
    .setJti('bench-jti')
    .sign(privateKey);
  const options = { algorithms: [alg], issuer: 'http://bench', audience: 'http://bench', typ: 'at+jwt' };
  const jose = await opsPerSecond(() => jwtVerify(token, publicKey, options));

  const keyObject = createPublicKey({ key: await exportJWK(publicKey), format: 'jwk' });
  const privateObject = createPrivateKey({ key: await exportJWK(privateKey), format: 'jwk' });
  const [h = '', p = '', s = ''] = token.split('.');
  const data = Buffer.from(`${h}.${p}`);
  const signature = Buffer.from(s, 'base64url');
  const algorithm = alg === 'EdDSA' ? null : 'sha256';
  const key = alg === 'ES256' ? { key: keyObject, dsaEncoding: 'ieee-p1363' as const } : keyObject;
  const signKey =
    alg === 'ES256' ? { key: privateObject, dsaEncoding: 'ieee-p1363' as const } : privateObject;
  if (!cryptoVerify(algorithm, data, key, signature))
    throw new Error(`${alg}: node:crypto rejected the token`);
  const node = await opsPerSecond(() => cryptoVerify(algorithm, data, key, signature));
  const sign = await opsPerSecond(() => cryptoSign(algorithm, data, signKey));
  return {
    alg,
    joseVerifyPerS: jose,
    nodeCryptoVerifyPerS: node,
    nodeCryptoSignPerS: sign,
    tokenBytes: token.length,
  };
}

const results = [await measure('ES256'), await measure('EdDSA'), await measure('RS256')];
process.stdout.write(`${JSON.stringify(results)}\n`);
