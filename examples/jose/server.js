// A resource server on plain node:http that accepts Gatehouse access tokens with jose, as jose's
// README shows: a remote JWKS (cached, refetched on an unknown kid) and jwtVerify with the issuer
// and audience, plus the RFC 9068 token type so an ID token is never taken for an access token.
import { createServer } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const issuer = process.env.GATEHOUSE_URL; // e.g. https://gatehouse.example.com (PUBLIC_URL)
const audience = process.env.AUDIENCE ?? issuer;
const JWKS = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));

const send = (res, status, body, headers = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

const server = createServer(async (req, res) => {
  if (req.url !== '/hello') return send(res, 404, { error: 'not_found' });
  const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
  if (!match) return send(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer' });
  try {
    const { payload } = await jwtVerify(match[1], JWKS, { issuer, audience, typ: 'at+jwt' });
    send(res, 200, { hello: payload.sub, role: payload.role, sid: payload.sid });
  } catch (err) {
    send(
      res,
      401,
      { error: 'invalid_token', detail: err.code },
      { 'www-authenticate': 'Bearer error="invalid_token"' },
    );
  }
});

const port = Number(process.env.PORT ?? 3003);
server.listen(port, '127.0.0.1', () => console.log(`jose example on http://127.0.0.1:${port}/hello`));
