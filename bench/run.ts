// `npm run bench`: Gatehouse's speed against baselines measured in the same run (docs/benchmarks.md).
// Options: --json (print the results as JSON instead of the table), --write-docs (replace the table in
// docs/benchmarks.md), --duration <s> (the whole-CPU runs and the login storm, default 6), --warmup <s> (default 2),
// --rounds <n> (baseline/service turns behind each ratio, default 3), --round-duration <s> (default 3),
// --no-build (measure the existing dist/), --no-hold (no server-bound runs: req/s ratios then measure
// the load generator as much as the server; see docs/benchmarks.md, "Server-bound").
import type { ChildProcess } from 'node:child_process';
import { execSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult, LoadSpec } from './load.ts';
import {
  type CpuCap,
  canBoost,
  canPin,
  cpuCap,
  cpuSeconds,
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
import {
  type Argon2Figure,
  type BenchReport,
  type Figure,
  machineInfo,
  renderTable,
  type ServerLoad,
  type Turn,
  writeDocs,
} from './report.ts';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const num = (name: string, def: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const DURATION_S = num('--duration', 6);
const WARMUP_S = num('--warmup', 2);
// Ratios come from rounds that take the baseline and the service in turns, each round's ratio
// from figures taken seconds apart; the median round is reported. One ratio of two figures taken
// a minute apart moved by ±10% on a VM whose speed drifts (docs/benchmarks.md, "Rounds").
const ROUNDS = num('--rounds', 3);
const ROUND_S = num('--round-duration', 3);
const CONNECTIONS = 16;
const LOGIN_CONNECTIONS = 16;
const STORM_CONNECTIONS = 32;
const ADMIN_EMAIL = 'bench-admin@gatehouse.test';
const ADMIN_PASSWORD = 'correct horse battery staple 42';
// The share of its CPU the server is held to in the server-bound runs. autocannon parses every
// response in JavaScript and needed a whole CPU to keep up with the bare route: unheld, the req/s
// ratios measured the load generator's cost of the extra response headers as much as the server.
const HOLD_SHARE = 0.5;

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

/**
 * The service's command line and environment, as `npm start` runs it (node flags and leading
 * `NAME=value` assignments, such as the malloc setting, included): the bench measures production.
 */
function serviceCommand(): { env: Record<string, string>; args: string[] } {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const words = (pkg.scripts.start ?? '').split(/\s+/).filter(Boolean);
  const env: Record<string, string> = {};
  for (let word = words[0]; word !== undefined && /^[A-Za-z_]\w*=/.test(word); word = words[0]) {
    const at = word.indexOf('=');
    env[word.slice(0, at)] = word.slice(at + 1);
    words.shift();
  }
  const [node, ...args] = words;
  if (node !== 'node' || args.at(-1) !== 'dist/src/main.js') {
    throw new Error(
      `package.json "start" is not "[NAME=value…] node [flags] dist/src/main.js": ${pkg.scripts.start}`,
    );
  }
  return { env, args };
}

/** Runs loads from a pinned generator against a server process and samples the server's CPU. */
async function load(serverPid: number, specs: LoadSpec[]): Promise<ServerLoad> {
  const warmup = Math.max(...specs.map((s) => s.warmupS));
  const duration = Math.max(...specs.map((s) => s.durationS));
  let before: number | null = null;
  const sample = setTimeout(() => {
    before = cpuSeconds(serverPid);
  }, warmup * 1000);
  const t0 = performance.now();
  const out = await runNodeJson<{ results: LoadResult[]; cpuS: number }>(LOAD_CPU, [
    'bench/load.ts',
    JSON.stringify(specs),
  ]);
  clearTimeout(sample);
  const after = cpuSeconds(serverPid);
  const measuredS = (performance.now() - t0) / 1000 - warmup;
  const cpuS = before !== null && after !== null ? after - before : null;
  const responses = out.results.reduce((n, r) => n + r.allRps * r.durationS, 0);
  return {
    results: out.results,
    serverCpu: cpuS === null ? null : cpuS / measuredS,
    cpuUsPerRequest: cpuS === null ? null : (cpuS * 1e6) / responses,
    loadCpu: out.cpuS / (warmup + duration),
  };
}

function spec(name: string, url: string, extra: Partial<LoadSpec> = {}): LoadSpec {
  return { name, url, connections: CONNECTIONS, durationS: DURATION_S, warmupS: WARMUP_S, ...extra };
}

/** Runs the loads with the server held to a share of its CPU (when a cap is given), then lets it go. */
async function held(cap: CpuCap | null, serverPid: number, specs: LoadSpec[]): Promise<ServerLoad> {
  if (cap === null) return load(serverPid, specs);
  cap.hold(serverPid);
  try {
    return await load(serverPid, specs);
  } finally {
    cap.release(serverPid);
  }
}

/** The bare Fastify baseline, started once and measured in turns with the service. */
async function startBareServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawnNode(SERVER_CPU, ['bench/baseline-server.ts']);
  const { port } = await firstJsonLine<{ port: number }>(child);
  return { child, url: `http://127.0.0.1:${port}/health` };
}

/** The raw argon2 baseline: its own pinned process, as many verifications in flight as login has connections. */
function argon2Baseline(durationS: number, warmupS: number): Promise<Argon2Figure> {
  return runNodeJson<Argon2Figure>(SERVER_CPU, [
    'bench/argon2-baseline.ts',
    String(LOGIN_CONNECTIONS),
    String(durationS),
    String(warmupS),
  ]);
}

/** Logs in over HTTP as the bench admin; returns the access token. */
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

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg();
  if (!flag('--no-build')) {
    log('building dist/ (npm run build)');
    execSync('npm run build --silent', { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!canPin()) log('taskset or a second CPU is missing: processes are NOT pinned; figures are rougher');
  const cap = flag('--no-hold') ? null : cpuCap(HOLD_SHARE);
  if (!cap && !flag('--no-hold'))
    log(
      'no cgroup CPU quota can be set (not root?): no server-bound runs; ratios include the load generator',
    );

  try {
    await measureAll(started, loadAtStart, cap);
  } finally {
    cap?.remove();
  }
}

async function measureAll(started: number, loadAtStart: number[], cap: CpuCap | null): Promise<void> {
  log('token signature algorithms');
  const algs = await runNodeJson<BenchReport['algorithms']>(SERVER_CPU, ['bench/jwt-algs.ts', '1']);

  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const start = serviceCommand();
  const env = {
    ...process.env,
    ...start.env,
    NODE_ENV: 'production',
    DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: base,
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  };
  let service: ChildProcess | undefined;
  let bare: { child: ChildProcess; url: string } | undefined;
  try {
    log('baseline: bare Fastify route');
    bare = await startBareServer();
    const barePid = bare.child.pid ?? 0;
    const bareSpecs = [spec('bare', bare.url)];
    const bareWhole = await load(barePid, bareSpecs);

    const t0 = performance.now();
    const assignments = Object.entries(start.env).map(([name, value]) => `${name}=${value} `);
    log(`service: ${assignments.join('')}node ${start.args.join(' ')}`);
    service = spawnNode(SERVER_CPU, start.args, {
      env,
      stdout: openSync(join(dir, 'service.log'), 'w'),
    });
    const startupMs = await waitFor200(`${base}/health`, t0);
    const pid = service.pid ?? 0;
    // The high-water mark after each phase: which one sets the peak.
    const rssSteps: Record<string, number | null> = { start: statusMb(pid, 'VmHWM') };

    log('service: GET /health');
    const healthSpecs = [spec('health', `${base}/health`)];
    const healthWhole = await load(pid, healthSpecs);
    rssSteps.health = statusMb(pid, 'VmHWM');

    const token = await login(base);
    log('service: GET /api/v1/verify-token');
    const verifySpecs = [
      spec('verify', `${base}/api/v1/verify-token`, { headers: { authorization: `Bearer ${token}` } }),
    ];
    const verifyWhole = await load(pid, verifySpecs);
    rssSteps.verify = statusMb(pid, 'VmHWM');

    // The ratios: bare, /health and verify-token in turns, server-bound where a quota can be set.
    const short = (s: LoadSpec) => ({ ...s, durationS: ROUND_S, warmupS: 1 });
    const healthRounds: Turn[] = [];
    const verifyRounds: Turn[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      log(`rounds: bare, /health, verify-token (${round}/${ROUNDS})`);
      const b = await held(cap, barePid, bareSpecs.map(short));
      const h = await held(cap, pid, healthSpecs.map(short));
      const v = await held(cap, pid, verifySpecs.map(short));
      healthRounds.push(turn(b, h));
      verifyRounds.push(turn(b, v));
    }
    rssSteps.rounds = statusMb(pid, 'VmHWM');
    await stopChild(bare.child);
    bare = undefined;

    // Login against raw argon2, in turns as well: argon2's speed on this VM drifts by a quarter
    // over minutes, more than any difference between the two.
    const body = JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const loginSpecs = [
      spec('login', `${base}/api/v1/login`, {
        method: 'POST',
        body,
        connections: LOGIN_CONNECTIONS,
        durationS: ROUND_S + 1,
        warmupS: 1,
      }),
    ];
    const loginRounds: Turn[] = [];
    let loginLoad: ServerLoad | undefined;
    for (let round = 1; round <= ROUNDS; round++) {
      log(
        `rounds: raw argon2 verify, POST /api/v1/login (${LOGIN_CONNECTIONS} connections) (${round}/${ROUNDS})`,
      );
      const a = await argon2Baseline(ROUND_S + 1, 1);
      loginLoad = await load(pid, loginSpecs);
      loginRounds.push(turn(a, loginLoad));
    }
    rssSteps.login = statusMb(pid, 'VmHWM');
    log(`service: GET /health while ${STORM_CONNECTIONS} connections hammer login`);
    const storm = await load(pid, [
      spec('storm-login', `${base}/api/v1/login`, { method: 'POST', body, connections: STORM_CONNECTIONS }),
      spec('storm-health', `${base}/health`, { connections: 2, overallRate: 200 }),
    ]);
    const peakRssMb = statusMb(pid, 'VmHWM');
    rssSteps.end = peakRssMb;

    const report: BenchReport = {
      machine: machineInfo(dir, canPin(), canBoost(), loadAtStart),
      command: `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`,
      durationS: DURATION_S,
      warmupS: WARMUP_S,
      rounds: ROUNDS,
      roundS: ROUND_S,
      connections: { throughput: CONNECTIONS, login: LOGIN_CONNECTIONS, storm: STORM_CONNECTIONS },
      holdShare: cap ? cap.share : null,
      whole: { bare: bareWhole, health: healthWhole, verify: verifyWhole },
      health: healthRounds,
      verify: verifyRounds,
      login: loginRounds,
      loginLoad: loginLoad ?? null,
      storm,
      algorithms: algs,
      peakRssMb,
      rssSteps,
      startupMs,
      totalS: (performance.now() - started) / 1000,
    };
    if (flag('--json')) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else process.stdout.write(`${renderTable(report)}\n`);
    if (flag('--write-docs')) writeDocs(report);
  } finally {
    if (bare) await stopChild(bare.child);
    if (service) await stopChild(service);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One round's pair: the baseline's and the service's figures, taken one after the other. */
function turn(baseline: ServerLoad | Argon2Figure, service: ServerLoad): Turn {
  const figure = (l: ServerLoad | Argon2Figure): Figure => {
    if ('results' in l) {
      const r = l.results[0] as LoadResult;
      return { rps: r.rps, p50Ms: r.p50Ms, p99Ms: r.p99Ms, serverCpu: l.serverCpu, loadCpu: l.loadCpu };
    }
    return { rps: l.rps, p50Ms: l.p50Ms, p99Ms: l.p99Ms, serverCpu: null, loadCpu: null };
  };
  const b = figure(baseline);
  const s = figure(service);
  return { baseline: b, service: s, ratio: s.rps / b.rps };
}

await main();
