// The per-core baselines of `npm run bench -- --sizing` (bench/sizing.ts), in a process pinned like
// the service: raw ES256 signatures per second (node:crypto, as Gatehouse signs its tokens), RS256 and
// local verifications per second of one Gatehouse access token against its JWKS with jose, as a
// resource server verifies without calling Gatehouse (docs/verifying-tokens.md).
//   node bench/sizing-baselines.ts '<{"token","jwks","issuer","audience"}>'
import { generateKeyPairSync, sign } from 'node:crypto';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';

const input = JSON.parse(process.argv[2] ?? '{}') as {
  token: string;
  jwks: JSONWebKeySet;
  issuer: string;
  audience: string;
};

async function perSecond(fn: () => unknown, seconds = 1.5): Promise<number> {
  for (let i = 0; i < 300; i++) await fn();
  let n = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < 50; i++) await fn();
    n += 50;
  }
  return n / ((performance.now() - start) / 1000);
}

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const data = Buffer.from(input.token.split('.').slice(0, 2).join('.'));
const es256SignPerS = await perSecond(() =>
  sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
);
// The oauth module signs its JWT access tokens for APIs with RS256 (docs/oauth.md).
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const rs256SignPerS = await perSecond(() => sign('sha256', data, rsa), 1);
const jwks = createLocalJWKSet(input.jwks);
const options = { issuer: input.issuer, audience: input.audience, typ: 'at+jwt' };
const jwksVerifyPerS = await perSecond(() => jwtVerify(input.token, jwks, options));
process.stdout.write(`${JSON.stringify({ es256SignPerS, rs256SignPerS, jwksVerifyPerS })}\n`);
