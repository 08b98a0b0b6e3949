// A resource server in Fastify that accepts Gatehouse access tokens with @fastify/jwt and get-jwks,
// set up as get-jwks's README shows for @fastify/jwt: the key comes from the issuer's
// /.well-known/jwks.json by the token's kid and alg. Only Gatehouse's issuer is fetched from, and
// the issuer and audience are checked by @fastify/jwt (fast-jwt's allowedIss/allowedAud).
import fjwt from '@fastify/jwt';
import Fastify from 'fastify';
import buildGetJwks from 'get-jwks';

const issuer = process.env.GATEHOUSE_URL; // e.g. https://gatehouse.example.com (PUBLIC_URL)
const audience = process.env.AUDIENCE ?? issuer;

const fastify = Fastify();
// Keys are fetched only from Gatehouse: the token's `iss` is not trusted before verification.
const getJwks = buildGetJwks({ issuersWhitelist: [issuer] });

fastify.register(fjwt, {
  decode: { complete: true },
  secret: (_request, token) => {
    const {
      header: { kid, alg },
      payload: { iss },
    } = token;
    return getJwks.getPublicKey({ kid, domain: iss, alg });
  },
  verify: { allowedIss: issuer, allowedAud: audience, algorithms: ['ES256', 'RS256', 'EdDSA'] },
});

// get-jwks's refusals carry no HTTP status, so Fastify would answer them 500: a token whose kid and
// alg are not in the JWKS, or whose issuer is not Gatehouse, is a bad token (401); only failing to
// reach Gatehouse at all is our problem (503). @fastify/jwt's own errors already say 401.
const NOT_OURS = new Set(['JWK_NOT_FOUND', 'DOMAIN_NOT_ALLOWED']);

fastify.addHook('onRequest', async (request, reply) => {
  try {
    await request.jwtVerify();
  } catch (err) {
    if (err.statusCode) throw err;
    const status = NOT_OURS.has(err.code) ? 401 : 503;
    reply.code(status);
    if (status === 401) reply.header('www-authenticate', 'Bearer error="invalid_token"');
    return reply.send({ error: status === 401 ? 'invalid_token' : 'unavailable', message: err.message });
  }
});

fastify.get('/hello', async (request) => {
  const { sub, role, sid } = request.user;
  return { hello: sub, role, sid };
});

const port = Number(process.env.PORT ?? 3002);
await fastify.listen({ port, host: '127.0.0.1' });
console.log(`fastify example on http://127.0.0.1:${port}/hello`);
