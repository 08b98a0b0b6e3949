// oidc-provider alone, as the ceiling of what the library does per core on this machine: the same
// version and the same choices as Gatehouse's `oauth` module (RS256 ID tokens, rotating refresh
// tokens, RFC 8707 resources answered with JWT access tokens, client_secret_basic), but its
// in-memory adapter (no database), static clients and no Gatehouse around it. Started pinned to
// the server CPU by bench/sizing.ts; prints one JSON line: its port, the client's Basic headers and
// `chains` refresh tokens minted through the library's own models.
//   node bench/oauth-ceiling-server.ts '<{"chains":16,"apiAlg":"ES256"}>'

import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const spec = JSON.parse(process.argv[2] ?? '{}') as { chains?: number; apiAlg?: string };
const API = 'https://api.sizing.test/';
const jwk = (k: ReturnType<typeof generateKeyPairSync>['privateKey'], alg: string, kid: string) => ({
  ...k.export({ format: 'jwk' }),
  alg,
  use: 'sig',
  kid,
});
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

const server = createServer();
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as { port: number }).port;
const issuer = `http://127.0.0.1:${port}`;
const account = {
  accountId: 'acc-1',
  claims: () => ({ sub: 'acc-1', email: 'a@example.test', email_verified: true }),
};

// The cheapest store there is: a Map of JSON strings (what a database adapter also writes).
const rows = new Map<string, string>();
class MapAdapter {
  readonly model: string;
  constructor(model: string) {
    this.model = model;
  }
  async upsert(id: string, payload: object) {
    rows.set(`${this.model}:${id}`, JSON.stringify(payload));
  }
  async find(id: string) {
    const row = rows.get(`${this.model}:${id}`);
    return row === undefined ? undefined : JSON.parse(row);
  }
  async findByUid() {
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id: string) {
    const found = await this.find(id);
    if (found) await this.upsert(id, { ...found, consumed: Math.floor(Date.now() / 1000) });
  }
  async destroy(id: string) {
    rows.delete(`${this.model}:${id}`);
  }
  async revokeByGrantId() {}
}

const provider = new Provider(issuer, {
  adapter: MapAdapter,
  ttl: {
    Grant: 3600,
    RefreshToken: 3600,
    AccessToken: 300,
    ClientCredentials: 300,
    Session: 3600,
    Interaction: 600,
    AuthorizationCode: 60,
    IdToken: 300,
  },
  jwks: { keys: [jwk(rsa, 'RS256', 'rs'), jwk(ec, 'ES256', 'ec')] },
  clients: [
    {
      client_id: 'worker',
      client_secret: 'worker-secret-worker-secret-worker-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: 'read:items',
    },
    {
      client_id: 'app',
      client_secret: 'app-secret-app-secret-app-secret-app-secret',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1:9/cb'],
      application_type: 'native',
      scope: 'openid email offline_access',
    },
  ],
  findAccount: async (_ctx: unknown, sub: string) => (sub === account.accountId ? account : undefined),
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  scopes: ['openid', 'email', 'offline_access', 'read:items'],
  rotateRefreshToken: true,
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => false,
      getResourceServerInfo: () => ({
        scope: 'read:items',
        audience: API,
        accessTokenTTL: 300,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: spec.apiAlg ?? 'ES256' } },
      }),
    },
  },
});
server.on('request', provider.callback());

// Refresh tokens as a code exchange leaves them: a grant with the OpenID scopes, one token each.
const client = await provider.Client.find('app');
const tokens: string[] = [];
for (let i = 0; i < (spec.chains ?? 16); i++) {
  const grant = new provider.Grant({ accountId: account.accountId, clientId: 'app' });
  grant.addOIDCScope('openid email offline_access');
  const grantId = await grant.save();
  const refresh = new provider.RefreshToken({
    client,
    accountId: account.accountId,
    grantId,
    scope: 'openid email offline_access',
    gty: 'authorization_code',
    authTime: Math.floor(Date.now() / 1000),
  });
  tokens.push(await refresh.save());
}
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
process.stdout.write(
  `${JSON.stringify({
    base: issuer,
    worker: basic('worker', 'worker-secret-worker-secret-worker-secret'),
    app: basic('app', 'app-secret-app-secret-app-secret-app-secret'),
    tokens,
  })}\n`,
);
process.on('SIGTERM', () => process.exit(0));
