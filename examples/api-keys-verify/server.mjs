// A team's own API protected with Gatehouse API keys (docs/api-keys.md): no dependencies, only
// node:http and fetch. Each request's `Authorization: Bearer <key>` is checked with one call to
// Gatehouse's POST /api/v1/api-keys/verify, made with this server's own key (scope api_keys:verify).
//
//   GATEHOUSE_URL=https://gatehouse.example.com GATEHOUSE_VERIFY_KEY=gate_… PORT=4000 node server.mjs
//
// GET /whoami answers who the key belongs to; GET /notes serves any valid key; DELETE /notes only a
// key whose owner is an admin (the owner object and roles come with the verify answer).
import { createServer } from 'node:http';

const GATEHOUSE_URL = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:3000';
const VERIFY_KEY = process.env.GATEHOUSE_VERIFY_KEY;
const PORT = Number(process.env.PORT ?? 4000);
if (!VERIFY_KEY) {
  console.error('GATEHOUSE_VERIFY_KEY must be set (a key with the scope api_keys:verify)');
  process.exit(1);
}

/** The key a request carries, or null. Only the shape Gatehouse documents: gate_ + 38 base62. */
function presentedKey(req) {
  const match = /^Bearer (gate_[0-9A-Za-z]{38})$/.exec(req.headers.authorization ?? '');
  return match ? match[1] : null;
}

/** Gatehouse's answer for a key: {valid: true, key, owner, scopes, roles} or {valid: false, reason}. */
async function verify(key) {
  const res = await fetch(`${GATEHOUSE_URL}/api/v1/api-keys/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${VERIFY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
    signal: AbortSignal.timeout(5000),
  });
  if (res.status !== 200) throw new Error(`verify answered ${res.status}`);
  return res.json();
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const server = createServer(async (req, res) => {
  try {
    const key = presentedKey(req);
    if (key === null)
      return send(res, 401, { error: 'an API key is required' }, { 'www-authenticate': 'Bearer' });
    const answer = await verify(key);
    if (!answer.valid) {
      if (answer.reason === 'rate_limited') {
        return send(res, 429, { error: 'rate_limited' }, { 'retry-after': String(answer.retry_after_s) });
      }
      return send(res, 401, { error: answer.reason }, { 'www-authenticate': 'Bearer error="invalid_token"' });
    }
    if (req.method === 'GET' && req.url === '/whoami') {
      return send(res, 200, {
        owner: answer.owner.id,
        key: answer.key.id,
        scopes: answer.scopes,
        roles: answer.roles,
      });
    }
    if (req.method === 'GET' && req.url === '/notes') {
      return send(res, 200, { notes: [`a note for ${answer.owner.id}`] });
    }
    if (req.method === 'DELETE' && req.url === '/notes') {
      if (answer.owner.role !== 'admin') return send(res, 403, { error: 'forbidden' });
      return send(res, 200, { deleted: true });
    }
    return send(res, 404, { error: 'not_found' });
  } catch (err) {
    console.error(err.message);
    return send(res, 503, { error: 'unavailable' });
  }
});

server.listen(PORT, '127.0.0.1', () => console.log(`listening on ${PORT}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
