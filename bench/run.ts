// `npm run bench`: the targets of docs/benchmarks.md, each a ratio of two figures taken in the same
// run, in turns. The servers (bare Fastify; Gatehouse on SQLite, on PostgreSQL, and the A/B servers
// with one optimization switched off or another token algorithm) each run pinned to CPU 0 with
// `taskset -c 0` (node's threads included); the load generator runs on CPU 1; PostgreSQL runs on the
// same machine, unpinned.
// Options: --rounds <n> (3), --round-duration <s> (3), --no-build, --json,
// --database-url postgres://… (default BENCH_DATABASE_URL, TEST_DATABASE_URL, or the local server).
import type { ChildProcess } from 'node:child_process';
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { LoadResult, LoadSpec } from './load.ts';
import {
  canPin,
  firstJsonLine,
  freePort,
  LOAD_CPU,
  runNodeJson,
  SERVER_CPU,
  spawnNode,
  statusMb,
  stopChild,
  waitFor200,
} from './processes.ts';

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
const ADMIN_EMAIL = 'bench-admin@gatehouse.test';
const ADMIN_PASSWORD = 'correct horse battery staple 42';
/** The login phase's users, one per connection (created with the admin's password). */
const LOGIN_USERS = Array.from({ length: 16 }, (_, i) => `bench-login-${i}@gatehouse.test`);
const PG_URL =
  option('--database-url') ??
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

interface Server {
  name: string;
  child: ChildProcess;
  base: string;
  token?: string;
}

interface Figure {
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

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

/** `npm start`'s command line: leading NAME=value assignments, node's flags, dist/src/main.js. */
function startCommand(): { env: Record<string, string>; args: string[] } {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const words = (pkg.scripts.start ?? '').split(/\s+/).filter(Boolean);
  const env: Record<string, string> = {};
  while (words[0] !== undefined && /^[A-Za-z_]\w*=/.test(words[0])) {
    const [name = '', ...value] = (words.shift() as string).split('=');
    env[name] = value.join('=');
  }
  if (words.shift() !== 'node' || words.at(-1) !== 'dist/src/main.js')
    throw new Error(`package.json "start" is not "[NAME=value…] node [flags] dist/src/main.js"`);
  return { env, args: words };
}

/** Starts Gatehouse as `npm start` does (`plain`: `node dist/src/main.js` alone, the flags' A/B). */
async function startGatehouse(name: string, env: Record<string, string>, plain = false): Promise<Server> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const start = plain ? { env: {}, args: ['dist/src/main.js'] } : startCommand();
  const child = spawnNode(SERVER_CPU, start.args, {
    env: {
      ...process.env,
      ...start.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: base,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdout: 'ignore',
  });
  await waitFor200(`${base}/health`, performance.now());
  const server: Server = { name, child, base };
  server.token = await login(base);
  return server;
}

async function login(base: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`login answered ${res.status}`);
  return body.access_token;
}

async function addLoginUsers(server: Server): Promise<void> {
  for (const email of LOGIN_USERS) {
    const res = await fetch(`${server.base}/api/v1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ email, password: ADMIN_PASSWORD }),
    });
    if (res.status !== 201) throw new Error(`creating a login user answered ${res.status}`);
  }
}

/** Users to list: a page of 20 needs more than 20. */
async function addUsers(server: Server, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${server.base}/api/v1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ email: `bench-${i}@gatehouse.test`, name: `Bench User ${i}` }),
    });
    if (res.status !== 201) throw new Error(`creating a user answered ${res.status}`);
  }
}

const bearer = (s: Server) => ({ headers: { authorization: `Bearer ${s.token}` } });
const verifySpec = (s: Server) => spec(`verify ${s.name}`, `${s.base}/api/v1/verify-token`, bearer(s));
const listSpec = (s: Server) => spec(`list ${s.name}`, `${s.base}/api/v1/users?limit=20`, bearer(s));

function figure(r: LoadResult): Figure {
  return { rps: r.rps, p50Ms: r.p50Ms, p99Ms: r.p99Ms };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function createPgDatabase(): Promise<string | null> {
  const name = `gatehouse_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
  } catch (err) {
    log(`PostgreSQL unavailable (${(err as Error).message}): its rows are skipped`);
    return null;
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropPgDatabase(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${new URL(url).pathname.slice(1)} with (force)`);
  await admin.end();
}

interface Row {
  name: string;
  target: string;
  ratio: number | null;
  rounds: number[];
  detail: string;
  pass: boolean | null;
}

async function main(): Promise<void> {
  if (!flag('--no-build')) {
    log('building dist/ (npm run build)');
    execSync('npm run build --silent', { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!canPin()) log('taskset or a second CPU is missing: processes are NOT pinned; figures are rougher');
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const pgUrl = await createPgDatabase();
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
    // A/B servers on SQLite: the verified-token cache off; the other two token algorithms (issue 19);
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

    const perRound = (a: string, b: string) =>
      (taken.get(a) ?? []).map((x, i) => x.rps / ((taken.get(b) ?? [])[i]?.rps ?? Number.NaN));
    const ratioRow = (name: string, a: string, b: string, target: number): Row => {
      const rounds = perRound(a, b);
      if (rounds.length === 0)
        return { name, target: `≥ ${target}`, ratio: null, rounds, detail: 'not measured', pass: null };
      const ratio = median(rounds);
      const rps = (k: string) => Math.round(median((taken.get(k) ?? []).map((f) => f.rps)));
      return {
        name,
        target: `≥ ${target}`,
        ratio,
        rounds,
        detail: `${rps(a)} vs ${rps(b)} req/s (medians)`,
        pass: ratio >= target,
      };
    };
    const loginRounds = logins.map((l, i) => l.rps / (argon2[i]?.rps ?? Number.NaN));
    const peak = Math.max(...Object.values(rss).map((v) => v ?? 0));
    const rows: Row[] = [
      ratioRow('verify-token: PostgreSQL / SQLite', 'verify postgres', 'verify sqlite', 0.7),
      ratioRow('users list (limit 20): PostgreSQL / SQLite', 'list postgres', 'list sqlite', 0.5),
      ratioRow(
        'verify-token on SQLite / bare Fastify route (ES256, the default)',
        'verify sqlite',
        'bare',
        0.5,
      ),
      ratioRow('verify-token on SQLite, EdDSA / bare Fastify route', 'verify sqlite EdDSA', 'bare', 0.5),
      ratioRow('verify-token on SQLite, RS256 / bare Fastify route', 'verify sqlite RS256', 'bare', 0.5),
      {
        ...ratioRow('(bound) Gatehouse /health / bare Fastify route', 'health sqlite', 'bare', 0),
        target: 'none',
        pass: null,
      },
      {
        name: 'login / raw argon2id verify (same parameters, 16 in flight, same CPU)',
        target: '≥ 0.9',
        ratio: median(loginRounds),
        rounds: loginRounds,
        detail: `${median(logins.map((l) => l.rps)).toFixed(1)} vs ${median(argon2.map((a) => a.rps)).toFixed(1)} /s`,
        pass: median(loginRounds) >= 0.9,
      },
      {
        name: `/health p99 while ${STORM_CONNECTIONS} connections hammer login`,
        target: '≤ 15 ms',
        ratio: health?.p99Ms ?? null,
        rounds: [],
        detail: `p50 ${health?.p50Ms.toFixed(2)} ms, ${health?.rps.toFixed(0)} req/s offered 200`,
        pass: health ? health.p99Ms <= 15 : null,
      },
      {
        name: 'peak RSS (VmHWM, largest Gatehouse process)',
        target: '≤ 150 MB',
        ratio: peak,
        rounds: [],
        detail: Object.entries(rss)
          .map(([n, v]) => `${n} ${v?.toFixed(0)} MB`)
          .join(', '),
        pass: peak <= 150,
      },
      {
        name: "A/B npm start's node flags: peak RSS, plain node / with the flags (same load)",
        target: '≥ 1.1 to keep them',
        ratio: afterRounds.plain / afterRounds.flags,
        rounds: [],
        detail: `${afterRounds.plain.toFixed(0)} vs ${afterRounds.flags.toFixed(0)} MB after the same rounds; verify-token ${ratioRow('', 'verify sqlite', 'verify sqlite plain', 0).ratio?.toFixed(2)}× and list ${ratioRow('', 'list sqlite', 'list sqlite plain', 0).ratio?.toFixed(2)}× the plain one's req/s`,
        pass: afterRounds.plain / afterRounds.flags >= 1.1,
      },
      {
        name: 'A/B session cache: verify-token on PostgreSQL, cache on / off',
        target: '≥ 1.1 to keep it',
        ...(() => {
          const rounds = perRound('verify postgres', 'verify postgres uncached');
          const ratio = rounds.length ? median(rounds) : null;
          return { rounds, ratio, pass: ratio === null ? null : ratio >= 1.1 };
        })(),
        detail: 'same servers, same run',
      },
      ratioRow(
        'A/B verified-token cache: verify-token on SQLite, cache on / off',
        'verify sqlite',
        'verify sqlite no token cache',
        1.1,
      ),
      {
        name: `A/B WORKER_NICE: /health p99 under ${STORM_CONNECTIONS} login connections, nice 0 / nice 10`,
        target: '≥ 1.1 to keep it',
        ratio: health && healthNiceZero ? healthNiceZero.p99Ms / health.p99Ms : null,
        rounds: [],
        detail: `${healthNiceZero?.p99Ms.toFixed(2)} vs ${health?.p99Ms.toFixed(2)} ms`,
        pass: health && healthNiceZero ? healthNiceZero.p99Ms / health.p99Ms >= 1.1 : null,
      },
    ];
    if (flag('--json'))
      process.stdout.write(`${JSON.stringify({ rows, taken: Object.fromEntries(taken) }, null, 2)}\n`);
    else process.stdout.write(`${table(rows)}\n`);
  } finally {
    for (const s of servers) await stopChild(s.child);
    if (pgUrl) await dropPgDatabase(pgUrl).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

function table(rows: Row[]): string {
  const fmt = (n: number | null) => (n === null ? '–' : n >= 10 ? n.toFixed(1) : n.toFixed(2));
  const lines = [
    '| measure | target | measured | rounds | | detail |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.target} | ${fmt(r.ratio)} | ${r.rounds.map((x) => x.toFixed(2)).join(', ')} | ${r.pass === null ? '–' : r.pass ? 'met' : '**missed**'} | ${r.detail} |`,
    ),
  ];
  return lines.join('\n');
}

await main();
