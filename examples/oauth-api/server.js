// An API (an RFC 8707 resource registered in Gatehouse) on plain node:http that accepts only the
// access tokens Gatehouse mints for it: RFC 9068 JWTs whose `aud` is this API's identifier, verified
// with jose as its README shows (a remote JWKS, cached and refetched on an unknown kid). A token
// minted for any other audience — another API, or Gatehouse's own /api/v1 — is refused, so a
// client cannot replay here a token it was given for somewhere else (the confused deputy).
import { createServer } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const issuer = process.env.GATEHOUSE_URL; // Gatehouse's PUBLIC_URL, e.g. https://id.example.com
const audience = process.env.API_RESOURCE; // this API's identifier, e.g. https://notes.example.com/
const requiredScope = process.env.API_SCOPE ?? 'read:notes';
if (!issuer || !audience) throw new Error('GATEHOUSE_URL and API_RESOURCE are required');
const JWKS = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));

const send = (res, status, body, headers = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
};

// Each signed-in person's notes; a real API would read them from its own store by `sub`.
const notesOf = (sub) => [
  { id: 1, text: `Notes kept for ${sub}` },
  { id: 2, text: 'Only a token minted for this API opens them' },
];

const server = createServer(async (req, res) => {
  if (req.method !== 'GET' || req.url !== '/notes') return send(res, 404, { error: 'not_found' });
  const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
  if (!match) return send(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer' });
  let payload;
  try {
    // `typ: at+jwt` (RFC 9068 §4) keeps an ID token from passing for an access token.
    ({ payload } = await jwtVerify(match[1], JWKS, { issuer, audience, typ: 'at+jwt' }));
  } catch (err) {
    return send(
      res,
      401,
      { error: 'invalid_token', detail: err.code },
      { 'www-authenticate': 'Bearer error="invalid_token"' },
    );
  }
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
  if (!scopes.includes(requiredScope)) {
    return send(
      res,
      403,
      { error: 'insufficient_scope' },
      { 'www-authenticate': `Bearer error="insufficient_scope", scope="${requiredScope}"` },
    );
  }
  send(res, 200, { owner: payload.sub, client_id: payload.client_id, notes: notesOf(payload.sub) });
});

const port = Number(process.env.PORT ?? 3005);
server.listen(port, '127.0.0.1', () => console.log(`notes API on http://127.0.0.1:${port}/notes`));
