// What API keys cost (docs/benchmarks.md, "API keys"; API §22's speed targets), run by `npm run
// bench` (and alone by `npm run bench -- --only api-keys`): Gatehouse (`API_FORM=full`) started as
// `npm start` starts it, pinned to CPU 0, on SQLite and on PostgreSQL; loads from CPU 1 (bench/load.ts,
// 16 connections). Per round, every load once, back to back, so each ratio compares figures taken
// seconds apart:
// - POST /api/v1/api-keys/verify (an admin's access token verifying a key) against GET /health
//   (target ≥ 0.5×) and against GET /api/v1/verify-token (target ≥ 0.9×);
// - GET /api/v1/users/<id> with a key against the same request with an access token (target ≥ 0.8×).
// Also shown: verify called with a verify key (`api_keys:verify`) instead of the admin's token.
import { join } from 'node:path';
import type { LoadResult, LoadSpec } from './load.ts';
import { LOAD_CPU, runNodeJson, stopChild } from './processes.ts';
import { median, type Row } from './run-report.ts';
import { createPgDatabase, dropPgDatabase, type Server, startGatehouse } from './run-servers.ts';

export interface ApiKeysOptions {
  rounds: number;
  roundS: number;
  /** The PostgreSQL server (a database of this section's own is created and dropped), or null: rows skipped. */
  pgAdminUrl: string | null;
  /** A directory for the SQLite file. */
  dir: string;
  log: (line: string) => void;
}

const CONNECTIONS = 16;

async function call(
  s: Server,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${s.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** The loads of one server: name → spec. */
async function loadsOf(s: Server, roundS: number): Promise<Array<[string, LoadSpec]>> {
  const me = (await call(s, 'GET', '/api/v1/verify-token')).user as { id: string };
  const key = String(
    (await call(s, 'POST', '/api/v1/api-keys', { name: 'bench', scopes: ['users:read'] })).key,
  );
  const verifier = String(
    (await call(s, 'POST', '/api/v1/api-keys', { name: 'bench-verify', scopes: ['api_keys:verify'] })).key,
  );
  const spec = (name: string, path: string, extra: Partial<LoadSpec> = {}): LoadSpec => ({
    name,
    url: `${s.base}${path}`,
    connections: CONNECTIONS,
    durationS: roundS,
    warmupS: 1,
    ...extra,
  });
  const token = { authorization: `Bearer ${s.token}` };
  const verify = (caller: string) => ({
    method: 'POST' as const,
    headers: { authorization: `Bearer ${caller}` },
    body: JSON.stringify({ key }),
  });
  return [
    ['health', spec('health', '/health')],
    ['verify-token', spec('verify-token', '/api/v1/verify-token', { headers: token })],
    ['verify', spec('verify', '/api/v1/api-keys/verify', verify(String(s.token)))],
    ['verify by key', spec('verify by key', '/api/v1/api-keys/verify', verify(verifier))],
    ['users.get token', spec('users.get token', `/api/v1/users/${me.id}`, { headers: token })],
    [
      'users.get key',
      spec('users.get key', `/api/v1/users/${me.id}`, { headers: { authorization: `Bearer ${key}` } }),
    ],
  ];
}

async function rps(spec: LoadSpec): Promise<number> {
  const out = await runNodeJson<{ results: LoadResult[] }>(LOAD_CPU, [
    'bench/load.ts',
    JSON.stringify([spec]),
  ]);
  const r = out.results[0] as LoadResult;
  const refused = Object.entries(r.statusCounts).filter(([code]) => !code.startsWith('2'));
  if (r.rps === 0 || refused.length > 0)
    throw new Error(`${spec.name}: answers ${JSON.stringify(r.statusCounts)}`);
  return r.rps;
}

const PAIRS: Array<[string, string, string, number | null]> = [
  ['api-keys verify / Gatehouse /health', 'verify', 'health', 0.5],
  ['api-keys verify / verify-token', 'verify', 'verify-token', 0.9],
  ['users.get with a key / with an access token', 'users.get key', 'users.get token', 0.8],
  ['(shown) verify, caller a verify key / the admin token', 'verify by key', 'verify', null],
];

/** Measures one engine's server; rows named `<pair> (<engine>)`. */
async function measure(engine: string, env: Record<string, string>, o: ApiKeysOptions): Promise<Row[]> {
  const s = await startGatehouse(`api-keys ${engine}`, {
    ...env,
    API_FORM: 'full',
    SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
    // `full` serves passkeys, which need a domain name (as bench/sizing.ts sets them).
    WEBAUTHN_RP_ID: 'localhost',
    WEBAUTHN_ORIGINS: 'http://localhost',
  });
  try {
    const loads = await loadsOf(s, o.roundS);
    const taken = new Map<string, number[]>(loads.map(([name]) => [name, []]));
    for (let round = 1; round <= o.rounds; round++) {
      for (const [name, spec] of loads) taken.get(name)?.push(await rps(spec));
      o.log(
        `api-keys ${engine} round ${round}/${o.rounds}: ${loads
          .map(([n]) => `${n} ${taken.get(n)?.at(-1)?.toFixed(0)}`)
          .join(', ')} req/s`,
      );
    }
    return PAIRS.map(([name, a, b, target]) => {
      const as = taken.get(a) ?? [];
      const bs = taken.get(b) ?? [];
      const rounds = as.map((x, i) => x / (bs[i] ?? Number.NaN));
      const ratio = median(rounds);
      return {
        name: `${name} (${engine})`,
        target: target === null ? 'none' : `≥ ${target}`,
        ratio,
        rounds,
        detail: `${Math.round(median(as))} vs ${Math.round(median(bs))} req/s (medians)`,
        pass: target === null ? null : ratio >= target,
      };
    });
  } finally {
    await stopChild(s.child);
  }
}

/** The API keys rows on SQLite, then on PostgreSQL when there is one. */
export async function runApiKeys(o: ApiKeysOptions): Promise<Row[]> {
  const rows = await measure('sqlite', { DATABASE_URL: `sqlite:${join(o.dir, 'api-keys.db')}` }, o);
  const pgUrl = o.pgAdminUrl
    ? await createPgDatabase(o.pgAdminUrl, o.log, `gatehouse_bench_keys_${process.pid}`)
    : null;
  if (pgUrl && o.pgAdminUrl) {
    try {
      rows.push(...(await measure('postgres', { DATABASE_URL: pgUrl }, o)));
    } finally {
      await dropPgDatabase(o.pgAdminUrl, pgUrl).catch(() => {});
    }
  }
  return rows;
}
