// The bench's table (Markdown, so the same text goes to the terminal and to docs/benchmarks.md).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import type { LoadResult } from './load.ts';

interface ServerLoad {
  results: LoadResult[];
  serverCpu: number | null;
  cpuUsPerRequest: number | null;
  loadCpu: number;
}

interface Throughput {
  whole: ServerLoad;
  held: ServerLoad | null;
}

/** Everything one bench run measured. */
export interface BenchReport {
  machine: Record<string, string>;
  command: string;
  durationS: number;
  warmupS: number;
  connections: { throughput: number; login: number; storm: number };
  /** The share of its CPU the server was held to in the server-bound runs; null when not held. */
  holdShare: number | null;
  /** Throughput scenarios: on a whole CPU, and server-bound (held) where a cgroup quota could be set. */
  bare: Throughput;
  health: Throughput;
  verify: Throughput;
  login: ServerLoad | null;
  storm: ServerLoad | null;
  argon2: { rps: number; p50Ms: number; p99Ms: number; concurrency: number };
  algorithms: Array<{
    alg: string;
    joseVerifyPerS: number;
    nodeCryptoVerifyPerS: number;
    tokenBytes: number;
  }>;
  peakRssMb: number | null;
  rssSteps: Record<string, number | null>;
  startupMs: number;
  totalS: number;
}

/** The machine the figures come from. */
export function machineInfo(
  dir: string,
  pinned: boolean,
  boosted: boolean,
  loadAtStart: number[],
): Record<string, string> {
  let fs = 'unknown';
  try {
    fs = execFileSync('df', ['-T', dir], { encoding: 'utf8' }).split('\n')[1]?.split(/\s+/)[1] ?? fs;
  } catch {
    // df missing: the filesystem stays unknown.
  }
  return {
    cpu: `${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}`,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    kernel: release(),
    node: process.version,
    pinning: pinned ? 'server and baselines on CPU 0, load generator on CPU 1 (taskset)' : 'none',
    priority: boosted ? 'each bench process in its own autogroup at nice -20' : 'default',
    'load average at start (1, 5, 15 min)': loadAtStart.map((l) => l.toFixed(1)).join(' '),
    'database filesystem': fs,
  };
}

const f = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n)
    ? '—'
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const ms = (n: number | undefined) => (n === undefined ? '—' : f(n, n < 10 ? 2 : 1));
const verdict = (ok: boolean) => (ok ? 'pass' : '**FAIL**');

function first(load: ServerLoad | null, name?: string): LoadResult | undefined {
  return name ? load?.results.find((r) => r.name === name) : load?.results[0];
}

/** Renders the report as Markdown: the main table, then the supporting figures. */
export function renderTable(r: BenchReport): string {
  // The ratios are judged on the server-bound runs when there are any (docs/benchmarks.md).
  const judged = (t: Throughput) => t.held ?? t.whole;
  const bare = first(judged(r.bare));
  const health = first(judged(r.health));
  const verify = first(judged(r.verify));
  const login = first(r.login);
  const stormLogin = first(r.storm, 'storm-login');
  const stormHealth = first(r.storm, 'storm-health');
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? a / b : Number.NaN);
  const rows: string[][] = [];
  const row = (cells: Array<string | number>) => rows.push(cells.map(String));
  const heldNote = r.holdShare === null ? '' : ` — server held to ${f(r.holdShare * 100)}% of its CPU`;
  row([
    `bare Fastify \`GET /health\` (baseline)${heldNote}`,
    f(bare?.rps),
    ms(bare?.p50Ms),
    ms(bare?.p99Ms),
    '',
    '',
    '',
  ]);
  const h = ratio(health?.rps, bare?.rps);
  row([
    `\`GET /health\`${heldNote}`,
    f(health?.rps),
    ms(health?.p50Ms),
    ms(health?.p99Ms),
    f(h, 2),
    '≥ 0.90',
    verdict(h >= 0.9),
  ]);
  const v = ratio(verify?.rps, bare?.rps);
  row([
    `\`GET /api/v1/verify-token\`${heldNote}`,
    f(verify?.rps),
    ms(verify?.p50Ms),
    ms(verify?.p99Ms),
    f(v, 2),
    '≥ 0.50',
    verdict(v >= 0.5),
  ]);
  row([
    `raw argon2id verify, ${r.argon2.concurrency} in flight (baseline)`,
    f(r.argon2.rps, 1),
    ms(r.argon2.p50Ms),
    ms(r.argon2.p99Ms),
    '',
    '',
    '',
  ]);
  if (login) {
    const l = ratio(login.rps, r.argon2.rps);
    row([
      `\`POST /api/v1/login\`, ${r.connections.login} connections`,
      f(login.rps, 1),
      ms(login.p50Ms),
      ms(login.p99Ms),
      f(l, 2),
      '≥ 0.90',
      verdict(l >= 0.9),
    ]);
  } else {
    row(['`POST /api/v1/login`', 'n/a (login endpoint missing)', '', '', '', '≥ 0.90', 'n/a']);
  }
  if (stormHealth) {
    const p99 = stormHealth.p99Ms;
    row([
      `\`GET /health\` at 200/s while ${r.connections.storm} connections hammer login`,
      f(stormHealth.rps),
      ms(stormHealth.p50Ms),
      ms(p99),
      '',
      'p99 ≤ 10 ms',
      verdict(p99 <= 10),
    ]);
  } else {
    row([
      '`GET /health` during a login storm',
      'n/a (login endpoint missing)',
      '',
      '',
      '',
      'p99 ≤ 10 ms',
      'n/a',
    ]);
  }
  row([
    'peak RSS of the service (VmHWM)',
    `${f(r.peakRssMb, 1)} MB`,
    '',
    '',
    '',
    '≤ 150 MB',
    r.peakRssMb === null ? 'n/a' : verdict(r.peakRssMb <= 150),
  ]);
  row([
    'start to first `/health` 200 (SQLite)',
    `${f(r.startupMs)} ms`,
    '',
    '',
    '',
    '≤ 1000 ms',
    verdict(r.startupMs <= 1000),
  ]);

  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'target', ''];
  const table = [header, header.map(() => '---'), ...rows].map((c) => `| ${c.join(' | ')} |`).join('\n');

  const cpu = (l: ServerLoad | null) =>
    l
      ? `server CPU ${f((l.serverCpu ?? Number.NaN) * 100)}%, load generator CPU ${f(l.loadCpu * 100)}%`
      : 'n/a';
  const notes: string[] = [];
  const whole = (t: Throughput) => first(t.whole);
  const wholeRatio = (t: Throughput) => f(ratio(whole(t)?.rps, whole(r.bare)?.rps), 2);
  const wholeLine = (name: string, t: Throughput, withRatio: boolean) =>
    `${name} ${f(whole(t)?.rps)} req/s (p50 ${ms(whole(t)?.p50Ms)} ms, p99 ${ms(whole(t)?.p99Ms)} ms` +
    `${withRatio ? `, ratio ${wholeRatio(t)}` : ''}; ${cpu(t.whole)})`;
  if (r.holdShare !== null) {
    notes.push(
      `- Server on its whole CPU (the load generator, not the server, may set the pace when its CPU nears 100%): ` +
        `${wholeLine('bare', r.bare, false)}; ${wholeLine('/health', r.health, true)}; ` +
        `${wholeLine('verify-token', r.verify, true)}.`,
      `- Server-bound runs: bare ${cpu(r.bare.held)}; /health ${cpu(r.health.held)}; verify-token ${cpu(r.verify.held)}.`,
    );
  } else {
    notes.push(
      `- No server-bound runs (no cgroup CPU quota here): the ratios above include the load generator's cost. ` +
        `CPU use: bare ${cpu(r.bare.whole)}; /health ${cpu(r.health.whole)}; verify-token ${cpu(r.verify.whole)}.`,
    );
  }
  notes.push(`- Login CPU use: ${cpu(r.login)}.`);
  if (stormLogin) {
    const c = stormLogin.statusCounts;
    notes.push(
      `- Login storm (${r.connections.storm} connections): ${f(stormLogin.rps, 1)} logins/s succeeded, ` +
        `${f((c['503'] ?? 0) / stormLogin.durationS, 1)}/s answered 503 + Retry-After (hashing at capacity), ` +
        `login p99 ${ms(stormLogin.p99Ms)} ms.`,
    );
  }
  const algs = r.algorithms
    .map(
      (a) =>
        `${a.alg}: ${f(a.nodeCryptoVerifyPerS)}/s with node:crypto, ${f(a.joseVerifyPerS)}/s through jose (WebCrypto)`,
    )
    .join('; ');
  notes.push(`- Access-token signature verification on one CPU: ${algs}.`);
  const steps = Object.entries(r.rssSteps)
    .map(([phase, mb]) => `${phase} ${f(mb)} MB`)
    .join(', ');
  notes.push(`- Service RSS high-water mark after each phase: ${steps}.`);
  notes.push(
    `- ${r.durationS} s per scenario after a ${r.warmupS} s warm-up; ${r.connections.throughput} connections ` +
      `for /health and verify-token; whole run ${f(r.totalS)} s.`,
  );
  const machine = Object.entries(r.machine)
    .map(([k, v]) => `${k}: ${v}`)
    .join('; ');
  notes.push(`- Machine: ${machine}.`, `- Command: \`${r.command}\`.`);
  return `${table}\n\n${notes.join('\n')}`;
}

const BEGIN = '<!-- bench:begin -->';
const END = '<!-- bench:end -->';

/** Replaces the generated block of docs/benchmarks.md with this run's table. */
export function writeDocs(r: BenchReport, path = 'docs/benchmarks.md'): void {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${path} has no ${BEGIN} … ${END} block`);
  const block = `${BEGIN}\n${renderTable(r)}\n${END}`;
  writeFileSync(path, text.slice(0, start) + block + text.slice(end + END.length));
}
