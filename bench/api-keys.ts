// What API keys cost (docs/api-keys.md), as requests per second through a listening server, each
// pair of loads back to back in short alternating rounds (load from elsewhere on the machine falls
// on both alike; the median of the per-pair ratios is reported):
// - POST /api/v1/api-keys/verify (an admin's access token verifying a key) against GET /health
//   (target ≥ 0.5×) and against GET /api/v1/verify-token (target ≥ 0.9×);
// - GET /api/v1/users/<id> with a key against the same request with an access token (target ≥ 0.8×).
// For a server pinned to one core: `taskset -c 0 node bench/api-keys.ts` runs server and load in one
// process, so the figures are per process; compare ratios, not absolute numbers.
//   node bench/api-keys.ts [database url, default a temporary SQLite file] [seconds per load = 2] [rounds = 5]
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startService } from '../src/kernel/server.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createLogger } from '../src/platform/logger.ts';

const [url, seconds = '2', roundCount = '5'] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-api-keys-bench-'));
const config = loadConfig({
  DATABASE_URL: url || `sqlite:${join(dir, 'g.db')}`,
  PUBLIC_URL: 'http://localhost:3000',
  API_FORM: 'full',
  SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
  ADMIN_EMAIL: 'bench@example.com',
  ADMIN_PASSWORD: 'correct horse battery staple 42',
  LOG_LEVEL: 'silent',
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
});
const service = await startService(config, createLogger('silent'));
await service.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;

async function call(path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, init);
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}
const json = { 'content-type': 'application/json' };
const login = await call('/api/v1/login', {
  method: 'POST',
  headers: json,
  body: JSON.stringify({ email: 'bench@example.com', password: 'correct horse battery staple 42' }),
});
const token = { authorization: `Bearer ${login.access_token}` };
const me = (login.user as { id: string }).id;
const created = await call('/api/v1/api-keys', {
  method: 'POST',
  headers: { ...token, ...json },
  body: JSON.stringify({ name: 'bench', scopes: ['users:read'] }),
});
const key = String(created.key);

interface Load {
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}
async function rps(load: Load): Promise<number> {
  const result = await autocannon({
    url: `${base}${load.path}`,
    method: load.method ?? 'GET',
    headers: load.headers ?? {},
    ...(load.body !== undefined && { body: load.body }),
    connections: 10,
    duration: Number(seconds),
  });
  if (result.non2xx > 0) throw new Error(`${load.path}: ${result.non2xx} answers not 2xx`);
  return result.requests.average;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const verify: Load = {
  path: '/api/v1/api-keys/verify',
  method: 'POST',
  headers: { ...token, ...json },
  body: JSON.stringify({ key }),
};
const pairs: Array<[string, Load, Load, number]> = [
  ['verify / health', verify, { path: '/health' }, 0.5],
  ['verify / verify-token', verify, { path: '/api/v1/verify-token', headers: token }, 0.9],
  [
    'users.get with a key / with an access token',
    { path: `/api/v1/users/${me}`, headers: { authorization: `Bearer ${key}` } },
    { path: `/api/v1/users/${me}`, headers: token },
    0.8,
  ],
];
try {
  console.log(`${config.databaseUrl.split(':')[0]}, ${seconds} s per load, ${roundCount} rounds`);
  for (const [name, a, b, target] of pairs) {
    await rps(a);
    await rps(b);
    const ratios: number[] = [];
    const as: number[] = [];
    const bs: number[] = [];
    for (let i = 0; i < Number(roundCount); i++) {
      const x = await rps(a);
      const y = await rps(b);
      as.push(x);
      bs.push(y);
      ratios.push(x / y);
    }
    const r = median(ratios);
    console.log(
      `${name}: ${median(as).toFixed(0)} / ${median(bs).toFixed(0)} req/s, ratio ${r.toFixed(2)} (target ≥ ${target}) ${r >= target ? 'ok' : 'BELOW'}`,
    );
  }
} finally {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
}
