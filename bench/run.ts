// `npm run bench`: the targets of docs/benchmarks.md, each a ratio of two figures taken in the same
// run, in turns. The servers (bare Fastify; Gatehouse on SQLite, on PostgreSQL, and the A/B servers
// with one optimization switched off or another token algorithm) each run pinned to CPU 0 with
// `taskset -c 0` (node's threads included); the load generator runs on CPU 1; PostgreSQL runs on the
// same machine, unpinned.
// Then API keys' rows (bench/api-keys.ts) and languages' rows (bench/languages.ts).
// Options: --rounds <n> (3), --round-duration <s> (3), --no-build, --json, --only api-keys|languages,
// --scim (bench/scim.ts only),
// --database-url postgres://… (default BENCH_DATABASE_URL, TEST_DATABASE_URL, or the local server).
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runApiKeys } from './api-keys.ts';
import { runLanguages } from './languages.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import {
  canPin,
  firstJsonLine,
  LOAD_CPU,
  runNodeJson,
  SERVER_CPU,
  spawnNode,
  statusMb,
  stopChild,
} from './processes.ts';
import { type Figure, type Row, rowsOf, table } from './run-report.ts';
import {
  ADMIN_PASSWORD,
  addLoginUsers,
  addUsers,
  createPgDatabase,
  dropPgDatabase,
  LOGIN_USERS,
  type Server,
  startGatehouse,
} from './run-servers.ts';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const ROUNDS = Number(option('--rounds') ?? 3);
const ROUND_S = Number(option('--round-duration') ?? 3);
const CONNECTIONS = 16;
const LOGIN_CONNECTIONS = 16;
const STORM_CONNECTIONS = 8;
const PG_URL =
  option('--database-url') ??
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

/** One load (or several at once) from the pinned generator; returns each load's figures. */
async function load(specs: LoadSpec[]): Promise<LoadResult[]> {
  const out = await runNodeJson<{ results: LoadResult[] }>(LOAD_CPU, [
    'bench/load.ts',
    JSON.stringify(specs),
  ]);
  return out.results;
}

const spec = (name: string, url: string, extra: Partial<LoadSpec> = {}): LoadSpec => ({
  name,
  url,
  connections: CONNECTIONS,
  durationS: ROUND_S,
  warmupS: 1,
  ...extra,
});

const bearer = (s: Server) => ({ headers: { authorization: `Bearer ${s.token}` } });
const verifySpec = (s: Server) => spec(`verify ${s.name}`, `${s.base}/api/v1/verify-token`, bearer(s));
const listSpec = (s: Server) => spec(`list ${s.name}`, `${s.base}/api/v1/users?limit=20`, bearer(s));

function figure(r: LoadResult): Figure {
  return { rps: r.rps, p50Ms: r.p50Ms, p99Ms: r.p99Ms };
}

/**
 * The SAML row: Gatehouse (API_FORM=full) pinned to SERVER_CPU on SQLite and on PostgreSQL, the
 * loader (bench/saml.ts: responses signed ahead, then posted 8 in flight) pinned to LOAD_CPU.
 */
async function runSaml(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-saml-'));
  const pgUrl = await createPgDatabase(PG_URL, log, `gatehouse_bench_saml_${process.pid}`);
  const results: Record<string, unknown> = {};
  try {
    const targets: Array<[string, string]> = [['sqlite', `sqlite:${join(dir, 'saml.db')}`]];
    if (pgUrl) targets.push(['postgres', pgUrl]);
    for (const [name, url] of targets) {
      const server = await startGatehouse(name, {
        DATABASE_URL: url,
        API_FORM: 'full',
        // The bench's PUBLIC_URL is an IP address; passkeys need a name (unused here).
        WEBAUTHN_RP_ID: 'localhost',
        WEBAUTHN_ORIGINS: 'http://localhost',
        SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
      });
      try {
        log(`SAML on ${name}: signing responses ahead, then posting them to the ACS`);
        results[name] = await runNodeJson(LOAD_CPU, [
          'bench/saml.ts',
          server.base,
          String(server.token),
          option('--saml-people') ?? '400',
          option('--saml-returning') ?? '3000',
        ]);
        log(`SAML on ${name}: ${JSON.stringify(results[name])}`);
      } finally {
        await stopChild(server.child);
      }
    }
  } finally {
    if (pgUrl) await dropPgDatabase(PG_URL, pgUrl).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify({ saml: results, pinned: canPin(), targetPerS: 300 })}
`);
}

async function main(): Promise<void> {
  if (flag('--scim')) {
    // docs/benchmarks.md, "SCIM at scale": N members (SCIM_BENCH_USERS, default 1,000,000) on both engines.
    const { runScimBench } = await import('./scim.ts');
    const users = Number(process.env.SCIM_BENCH_USERS ?? 1_000_000);
    const sqliteDir = mkdtempSync(join(tmpdir(), 'gatehouse-scim-bench-'));
    const pgUrl = await createPgDatabase(PG_URL, log);
    try {
      await runScimBench({
        urls: [`sqlite:${join(sqliteDir, 'scim.db')}`, ...(pgUrl === null ? [] : [pgUrl])],
        users,
        iterations: Number(option('--iterations') ?? 200),
        log,
      });
    } finally {
      rmSync(sqliteDir, { recursive: true, force: true });
      if (pgUrl !== null) await dropPgDatabase(PG_URL, pgUrl);
    }
    return;
  }
  if (flag('--sizing')) {
    // docs/sizing.md: per-core figures on both engines (bench/sizing.ts).
    const { buildOnce, runSizing } = await import('./sizing.ts');
    buildOnce(flag('--no-build'));
    await runSizing({
      rounds: Number(option('--rounds') ?? 2),
      roundS: ROUND_S,
      pgUrl: PG_URL,
      out: option('--out') ?? 'docs/sizing.md',
      log,
    });
    return;
  }
  if (flag('--saml')) {
    // docs/benchmarks.md, "SAML": assertions consumed per second per core (bench/saml.ts).
    if (!flag('--no-build')) execSync('npm run build --silent', { stdio: ['ignore', 'ignore', 'inherit'] });
    await runSaml();
    return;
  }
  if (!flag('--no-build')) {
    log('building dist/ (npm run build)');
    execSync('npm run build --silent', { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!canPin()) log('taskset or a second CPU is missing: processes are NOT pinned; figures are rougher');
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const pgUrl = await createPgDatabase(PG_URL, log);
  // `--only api-keys` or `--only languages`: that section alone (docs/benchmarks.md).
  const only = option('--only');
  try {
    const rows: Row[] = only ? [] : await serviceRows(dir, pgUrl);
    const sections = { rounds: ROUNDS, roundS: ROUND_S, pgAdminUrl: pgUrl ? PG_URL : null, dir, log };
    if (!only || only === 'api-keys') rows.push(...(await runApiKeys(sections)));
    if (!only || only === 'languages') rows.push(...(await runLanguages(sections)));
    if (flag('--json')) process.stdout.write(`${JSON.stringify({ rows }, null, 2)}\n`);
    else process.stdout.write(`${table(rows)}\n`);
  } finally {
    if (pgUrl) await dropPgDatabase(PG_URL, pgUrl).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The service targets of issue 18 (docs/benchmarks.md, "Service speed"). */
async function serviceRows(dir: string, pgUrl: string | null): Promise<Row[]> {
  const servers: Server[] = [];
  try {
    log('starting: bare Fastify, Gatehouse on SQLite and on PostgreSQL (session cache on, off)');
    const bareChild = spawnNode(SERVER_CPU, ['bench/baseline-server.ts']);
    const { port } = await firstJsonLine<{ port: number }>(bareChild);
    const bare: Server = { name: 'bare', child: bareChild, base: `http://127.0.0.1:${port}` };
    servers.push(bare);
    const sqlite = await startGatehouse('sqlite', { DATABASE_URL: `sqlite:${join(dir, 'bench.db')}` });
    servers.push(sqlite);
    await addUsers(sqlite, 50);
    const sqlitePlain = await startGatehouse(
      'sqlite, plain node',
      { DATABASE_URL: `sqlite:${join(dir, 'bench-plain.db')}` },
      true,
    );
    servers.push(sqlitePlain);
    await addUsers(sqlitePlain, 50);
    // A/B servers on SQLite: the verified-token cache off; the other two token algorithms (EdDSA, RS256);
    // the hashing threads at normal priority (WORKER_NICE=0) for the /health-under-logins A/B.
    const sqliteWith = async (name: string, env: Record<string, string>) => {
      const server = await startGatehouse(name, {
        DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}`,
        ...env,
      });
      servers.push(server);
      return server;
    };
    const noTokenCache = await sqliteWith('sqlite-no-token-cache', { VERIFIED_TOKEN_CACHE_SIZE: '0' });
    const eddsa = await sqliteWith('sqlite-eddsa', { ACCESS_TOKEN_ALG: 'EdDSA' });
    const rs256 = await sqliteWith('sqlite-rs256', { ACCESS_TOKEN_ALG: 'RS256' });
    const niceZero = await sqliteWith('sqlite-nice-0', { WORKER_NICE: '0' });
    await addLoginUsers(sqlite);
    await addLoginUsers(niceZero);
    let postgres: Server | null = null;
    let uncached: Server | null = null;
    if (pgUrl) {
      postgres = await startGatehouse('postgres', { DATABASE_URL: pgUrl });
      servers.push(postgres);
      await addUsers(postgres, 50);
      uncached = await startGatehouse('postgres, no session cache', {
        DATABASE_URL: pgUrl,
        SESSION_CACHE_SIZE: '0',
      });
      servers.push(uncached);
    }

    // Every scenario once per round, one right after the other: each ratio compares figures taken
    // seconds apart (this VM's speed drifts over minutes).
    const scenarios: Array<[string, LoadSpec]> = [
      ['bare', spec('bare', `${bare.base}/health`)],
      ['health sqlite', spec('health sqlite', `${sqlite.base}/health`)],
      ['verify sqlite', verifySpec(sqlite)],
      ['verify sqlite no token cache', verifySpec(noTokenCache)],
      ['verify sqlite EdDSA', verifySpec(eddsa)],
      ['verify sqlite RS256', verifySpec(rs256)],
      ['list sqlite', listSpec(sqlite)],
      ['verify sqlite plain', verifySpec(sqlitePlain)],
      ['list sqlite plain', listSpec(sqlitePlain)],
    ];
    if (postgres && uncached) {
      scenarios.push(
        ['verify postgres', verifySpec(postgres)],
        ['verify postgres uncached', verifySpec(uncached)],
        ['list postgres', listSpec(postgres)],
      );
    }
    const taken = new Map<string, Figure[]>(scenarios.map(([name]) => [name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      log(`round ${round}/${ROUNDS}: ${scenarios.map(([n]) => n).join(', ')}`);
      for (const [name, s] of scenarios) {
        const [result] = await load([s]);
        if (!result || result.rps === 0) throw new Error(`${name}: no 2xx answers`);
        taken.get(name)?.push(figure(result));
      }
    }
    // The flags' A/B: both SQLite servers have had the same load so far (the login phases go to one).
    const afterRounds = {
      flags: statusMb(sqlite.child.pid ?? 0, 'VmHWM') ?? Number.NaN,
      plain: statusMb(sqlitePlain.child.pid ?? 0, 'VmHWM') ?? Number.NaN,
    };
    // Each connection logs in as a user of its own, as many people signing in at once do: one
    // account's concurrent attempts beyond its budget are refused with 429 before any hashing
    // (docs/security.md), which would measure the throttle instead of the login.
    const loginSpec = spec('login', `${sqlite.base}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      bodies: LOGIN_USERS.map((email) => JSON.stringify({ email, password: ADMIN_PASSWORD })),
      connections: LOGIN_CONNECTIONS,
      durationS: ROUND_S + 1,
    });
    const argon2: Figure[] = [];
    const logins: Figure[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      log(`round ${round}/${ROUNDS}: raw argon2id verify, login (${LOGIN_CONNECTIONS} in flight)`);
      argon2.push(
        await runNodeJson<Figure>(SERVER_CPU, [
          'bench/argon2-baseline.ts',
          String(LOGIN_CONNECTIONS),
          String(ROUND_S + 1),
          '1',
        ]),
      );
      const [result] = await load([loginSpec]);
      logins.push(figure(result as LoadResult));
    }
    log(`/health while ${STORM_CONNECTIONS} connections hammer login (SQLite; WORKER_NICE 10, then 0)`);
    const storm = async (server: Server) => {
      const [, health] = await load([
        {
          ...loginSpec,
          url: `${server.base}/api/v1/login`,
          connections: STORM_CONNECTIONS,
          durationS: 8,
          warmupS: 2,
        },
        spec('health', `${server.base}/health`, {
          connections: 2,
          overallRate: 200,
          durationS: 8,
          warmupS: 2,
        }),
      ]);
      return health;
    };
    const health = await storm(sqlite);
    const healthNiceZero = await storm(niceZero);
    const rss = Object.fromEntries(
      servers
        .filter((s) => s === sqlite || s === postgres || s === uncached)
        .map((s) => [s.name, statusMb(s.child.pid ?? 0, 'VmHWM')]),
    );

    return rowsOf({
      taken,
      logins,
      argon2,
      health,
      healthNiceZero,
      rss,
      afterRounds,
      STORM_CONNECTIONS,
    });
  } finally {
    for (const s of servers) await stopChild(s.child);
  }
}

await main();
