// `npm run bench -- --sizing`: what one core carries, on SQLite and on PostgreSQL, written to
// docs/sizing.md. Each Gatehouse (API_FORM=full: the oauth module on) runs pinned to CPU 0 as in
// `npm run bench`; the load generator on CPU 1; baselines (raw argon2id verify, raw ES256 signing,
// local JWKS verification) pinned to CPU 0 in between, so every ratio compares figures taken seconds
// apart. Options: --rounds <n> (2), --round-duration <s> (3), --no-build, --database-url, --out <file>.
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { LoadResult, LoadSpec } from './load.ts';
import { libraryAlone } from './oauth-ceiling.ts';
import { type CodeClient, codeClient, oauthRefreshTokens } from './oauth-code.ts';
import { refreshTokens, writesPer } from './pg-writes.ts';
import {
  cpuSeconds,
  LOAD_CPU,
  runNodeJson,
  SERVER_CPU,
  statusMb,
  stopChild,
  type ThreadCpu,
  threadCpuSeconds,
} from './processes.ts';
import {
  ADMIN_PASSWORD,
  addLoginUsers,
  createPgDatabase,
  dropPgDatabase,
  LOGIN_USERS,
  type Server,
  startGatehouse,
} from './run-servers.ts';
import { type Dialect, type Measured, sizingReport } from './sizing-report.ts';

const LOGIN_CONNECTIONS = 8;
const CONNECTIONS = 16;
const API = 'https://api.sizing.test/';
// A fixed key: `oauth` seals client secrets with it and cannot start on PostgreSQL without one.
const SECRETS_KEY = Buffer.alloc(32, 9).toString('base64');

export interface SizingOptions {
  rounds: number;
  roundS: number;
  pgUrl: string;
  out: string;
  log: (line: string) => void;
}

export interface Setup {
  server: Server;
  basic: string;
  opaque: string;
  code: CodeClient;
  dialect: Dialect;
  pgUrl: string | null;
}

const json = async (s: Server, method: string, path: string, body: unknown) => {
  const res = await fetch(`${s.base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300)
    throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
};

async function tokenGrant(s: Server, basic: string, form: Record<string, string>): Promise<string> {
  const res = await fetch(`${s.base}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
    body: new URLSearchParams(form).toString(),
  });
  const answer = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !answer.access_token) throw new Error(`token grant answered ${res.status}`);
  return answer.access_token;
}

export async function start(
  dialect: Dialect,
  dir: string,
  pgUrl: string | null,
  build?: string,
  env: Record<string, string> = {},
): Promise<Setup> {
  const url = dialect === 'postgres' ? (pgUrl as string) : `sqlite:${join(dir, 'sizing.db')}`;
  const server = await startGatehouse(
    dialect,
    {
      DATABASE_URL: url,
      API_FORM: 'full',
      SECRETS_KEY,
      // Passkeys (on in full) need a domain; the bench serves 127.0.0.1.
      WEBAUTHN_RP_ID: 'localhost',
      WEBAUTHN_ORIGINS: 'http://localhost',
      ...env,
    },
    false,
    build,
  );
  await addLoginUsers(server);
  await json(server, 'POST', '/api/v1/resources', {
    identifier: API,
    name: 'Sizing API',
    scopes: [{ name: 'read:items', description: 'Read items' }],
  });
  const client = (await json(server, 'POST', '/api/v1/clients', {
    name: 'Sizing worker',
    grant_types: ['client_credentials'],
    resources: [API],
    scopes: ['read:items'],
  })) as { client_id: string; client_secret: string };
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
  const opaque = await tokenGrant(server, basic, { grant_type: 'client_credentials' });
  return { server, basic, opaque, code: await codeClient(server), dialect, pgUrl };
}

const load = async (spec: LoadSpec): Promise<LoadResult> => {
  const out = await runNodeJson<{ results: LoadResult[] }>(LOAD_CPU, [
    'bench/load.ts',
    JSON.stringify([spec]),
  ]);
  return out.results[0] as LoadResult;
};

/**
 * One round of every load on one server: per figure, requests per second answered 2xx; `cpuUs`, when
 * given, gets the server's CPU microseconds per 2xx answer of each figure (steadier on a busy machine);
 * `after` runs after each load (bench/rss-phases.ts reads the server's memory there); `threads`, when
 * given, gets those microseconds per kind of thread (event loop, libuv pool, V8's helpers).
 */
export async function round(
  set: Setup,
  roundS: number,
  cpuUs?: Record<string, number>,
  after?: (load: string) => Promise<void>,
  threads?: Record<string, ThreadCpu>,
): Promise<Record<string, number>> {
  const { server: s, basic } = set;
  const base = { connections: CONNECTIONS, durationS: roundS, warmupS: 1 };
  const form = { 'content-type': 'application/x-www-form-urlencoded', authorization: basic };
  const figures: Record<string, number> = {};
  const pid = s.child.pid ?? 0;
  /** Runs one load; its figure, and the server's CPU per answer over the warm-up and the measure. */
  const measure = async (
    name: string,
    warmupS: number,
    durationS: number,
    run: () => Promise<{ rps: number; statusCounts?: unknown }>,
  ) => {
    const cpu0 = cpuSeconds(pid);
    const split0 = threads ? threadCpuSeconds(pid) : null;
    const { rps, statusCounts } = await run();
    const cpu1 = cpuSeconds(pid);
    const split1 = threads ? threadCpuSeconds(pid) : null;
    if (rps === 0)
      throw new Error(`${name} on ${set.dialect}: no 2xx answers (${JSON.stringify(statusCounts)})`);
    figures[name] = rps;
    const answers = rps * (warmupS + durationS);
    if (cpuUs && cpu0 !== null && cpu1 !== null) cpuUs[name] = ((cpu1 - cpu0) * 1e6) / answers;
    if (threads && split0 && split1) {
      const per = (k: keyof ThreadCpu) => ((split1[k] - split0[k]) * 1e6) / answers;
      threads[name] = { loop: per('loop'), pool: per('pool'), v8: per('v8'), other: per('other') };
    }
    await after?.(name);
  };
  const autocannon = (name: string, spec: Omit<LoadSpec, 'name'>) =>
    measure(name, spec.warmupS, spec.durationS, () => load({ name, ...spec }));
  const chainLoad = (name: string, spec: Record<string, unknown>) =>
    measure(name, 1, roundS, () =>
      runNodeJson<{ rps: number; statusCounts: unknown }>(LOAD_CPU, [
        'bench/chain-load.ts',
        JSON.stringify({ ...spec, durationS: roundS, warmupS: 1 }),
      ]),
    );
  await autocannon('login', {
    ...base,
    url: `${s.base}/api/v1/login`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    bodies: LOGIN_USERS.slice(0, LOGIN_CONNECTIONS).map((email) =>
      JSON.stringify({ email, password: ADMIN_PASSWORD }),
    ),
    connections: LOGIN_CONNECTIONS,
    durationS: roundS + 1,
  });
  const tokens = await refreshTokens(s, LOGIN_CONNECTIONS);
  await chainLoad('refresh', { url: `${s.base}/api/v1/refresh-token`, field: 'refresh_token', tokens });
  // OAuth refresh grants: one chain per connection, each its own grant from a code flow.
  const oauthTokens = await oauthRefreshTokens(s, set.code, CONNECTIONS);
  await chainLoad('oauthRefresh', {
    url: `${s.base}/oauth2/token`,
    field: 'refresh_token',
    tokens: oauthTokens,
    form: { grant_type: 'refresh_token' },
    authorization: set.code.basic,
  });
  const bearer = { authorization: `Bearer ${s.token}` };
  await autocannon('verify', { ...base, url: `${s.base}/api/v1/verify-token`, headers: bearer });
  const grant = new URLSearchParams({ grant_type: 'client_credentials', resource: API, scope: 'read:items' });
  await autocannon('grant', {
    ...base,
    url: `${s.base}/oauth2/token`,
    method: 'POST',
    headers: form,
    body: grant.toString(),
  });
  await autocannon('grantOpaque', {
    ...base,
    url: `${s.base}/oauth2/token`,
    method: 'POST',
    headers: form,
    body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
  });
  await autocannon('introspect', {
    ...base,
    url: `${s.base}/oauth2/introspect`,
    method: 'POST',
    headers: form,
    body: new URLSearchParams({ token: set.opaque }).toString(),
  });
  return figures;
}

export async function runSizing(o: SizingOptions): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-sizing-'));
  const pgUrl = await createPgDatabase(o.pgUrl, o.log);
  const sets: Setup[] = [];
  try {
    o.log('starting Gatehouse (API_FORM=full) on SQLite and on PostgreSQL, pinned to CPU 0');
    sets.push(await start('sqlite', dir, null));
    if (pgUrl) sets.push(await start('postgres', dir, pgUrl));
    const measured: Measured = {
      rounds: [],
      threads: [],
      baselines: [],
      rss: {},
      writes: null,
      versions: {},
    };
    for (let r = 1; r <= o.rounds; r++) {
      const first = sets[0] as Setup;
      const baseline = await runNodeJson<{
        es256SignPerS: number;
        rs256SignPerS: number;
        jwksVerifyPerS: number;
      }>(SERVER_CPU, [
        'bench/sizing-baselines.ts',
        JSON.stringify({
          token: first.server.token,
          jwks: await (await fetch(`${first.server.base}/.well-known/jwks.json`)).json(),
          issuer: first.server.base,
          audience: first.server.base,
        }),
      ]);
      const argon2 = await runNodeJson<{ rps: number }>(SERVER_CPU, [
        'bench/argon2-baseline.ts',
        String(LOGIN_CONNECTIONS),
        String(o.roundS),
        '1',
      ]);
      // The library alone signs API tokens with the algorithm Gatehouse uses by default (ES256).
      const library = await libraryAlone(o.roundS, 'ES256');
      measured.baselines.push({ ...baseline, argon2PerS: argon2.rps, library });
      const order = r % 2 === 1 ? sets : [...sets].reverse();
      const figures: Measured['rounds'][number] = {};
      const threadsOf: Measured['threads'][number] = {};
      for (const set of order) {
        o.log(
          `round ${r}/${o.rounds}: ${set.dialect}: login, refresh, OAuth refresh, verify-token, grants, introspection`,
        );
        const split: Record<string, ThreadCpu> = {};
        figures[set.dialect] = await round(set, o.roundS, undefined, undefined, split);
        threadsOf[set.dialect] = split;
      }
      measured.rounds.push(figures);
      measured.threads.push(threadsOf);
    }
    for (const set of sets) measured.rss[set.dialect] = statusMb(set.server.child.pid ?? 0, 'VmHWM');
    const pgSet = sets.find((s) => s.dialect === 'postgres');
    if (pgSet) {
      o.log('PostgreSQL: counting writes per login and per refresh');
      measured.writes = await writesPer(pgSet.server, pgSet.pgUrl as string, o.pgUrl);
      const admin = new pg.Client({ connectionString: o.pgUrl });
      await admin.connect();
      measured.versions.postgres = String(
        ((await admin.query('show server_version')).rows[0] as { server_version: string }).server_version,
      );
      await admin.end();
    }
    const report = sizingReport(measured);
    writeFileSync(o.out, report);
    o.log(`wrote ${o.out}`);
  } finally {
    for (const s of sets) await stopChild(s.server.child);
    if (pgUrl) await dropPgDatabase(o.pgUrl, pgUrl).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

export function buildOnce(skip: boolean): void {
  if (!skip) execSync('npm run build --silent', { stdio: ['ignore', 'ignore', 'inherit'] });
}
