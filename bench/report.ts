// The bench's table (Markdown, so the same text goes to the terminal and to docs/benchmarks.md).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import type { LoadResult } from './load.ts';

/** A load run against one server process, with that process's CPU use. */
export interface ServerLoad {
  results: LoadResult[];
  /** CPU share the pinned server used during the load (1 = its whole CPU). */
  serverCpu: number | null;
  /** Server CPU microseconds per response: unlike req/s, barely moved by other load on the machine. */
  cpuUsPerRequest: number | null;
  loadCpu: number;
}

/** What bench/argon2-baseline.ts prints. */
export interface Argon2Figure {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  concurrency: number;
}

/** One side of a round. */
export interface Figure {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  serverCpu: number | null;
  loadCpu: number | null;
}

/** One round: the baseline, then the service, measured one right after the other. */
export interface Turn {
  baseline: Figure;
  service: Figure;
  ratio: number;
}

/** Everything one bench run measured. */
export interface BenchReport {
  machine: Record<string, string>;
  command: string;
  durationS: number;
  warmupS: number;
  rounds: number;
  roundS: number;
  connections: { throughput: number; login: number; storm: number };
  /** The share of its CPU the server was held to in the rounds; null when not held. */
  holdShare: number | null;
  /** The throughput scenarios once each on the server's whole CPU (printed under the table). */
  whole: { bare: ServerLoad; health: ServerLoad; verify: ServerLoad };
  /** The rounds behind each ratio: bare vs /health, bare vs verify-token, raw argon2 vs login. */
  health: Turn[];
  verify: Turn[];
  login: Turn[];
  /** The last login round's load, for its CPU use. */
  loginLoad: ServerLoad | null;
  storm: ServerLoad | null;
  algorithms: Array<{
    alg: string;
    joseVerifyPerS: number;
    nodeCryptoVerifyPerS: number;
    nodeCryptoSignPerS: number;
    tokenBytes: number;
  }>;
  peakRssMb: number | null;
  rssSteps: Record<string, number | null>;
  startupMs: number;
  totalS: number;
}

/** The round whose ratio is the median (an even count takes the lower middle). */
export function medianRound(rounds: Turn[]): Turn | undefined {
  const sorted = [...rounds].sort((a, b) => a.ratio - b.ratio);
  return sorted[Math.floor((sorted.length - 1) / 2)];
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
  const stormLogin = first(r.storm, 'storm-login');
  const stormHealth = first(r.storm, 'storm-health');
  const rows: string[][] = [];
  const row = (cells: Array<string | number>) => rows.push(cells.map(String));
  const heldNote = r.holdShare === null ? '' : ` — server held to ${f(r.holdShare * 100)}% of its CPU`;
  const all = (rounds: Turn[]) => rounds.map((t) => f(t.ratio, 2)).join(', ');
  // Each ratio row shows its median round: the service's figures, and the baseline's of that round.
  const ratioRows = (
    baselineName: string,
    serviceName: string,
    rounds: Turn[],
    target: number,
    digits: number,
  ) => {
    const m = medianRound(rounds);
    row([
      `${baselineName} (baseline)`,
      f(m?.baseline.rps, digits),
      ms(m?.baseline.p50Ms),
      ms(m?.baseline.p99Ms),
      '',
      '',
      '',
    ]);
    const ratio = m?.ratio ?? Number.NaN;
    row([
      `${serviceName} (rounds: ${all(rounds)})`,
      f(m?.service.rps, digits),
      ms(m?.service.p50Ms),
      ms(m?.service.p99Ms),
      f(ratio, 2),
      `≥ ${target.toFixed(2)}`,
      verdict(ratio >= target),
    ]);
  };
  ratioRows(`bare Fastify \`GET /health\`${heldNote}`, `\`GET /health\`${heldNote}`, r.health, 0.9, 0);
  ratioRows(
    `bare Fastify \`GET /health\`${heldNote}`,
    `\`GET /api/v1/verify-token\`${heldNote}`,
    r.verify,
    0.5,
    0,
  );
  if (r.login.length > 0) {
    ratioRows(
      `raw argon2id verify, ${r.connections.login} in flight`,
      `\`POST /api/v1/login\`, ${r.connections.login} connections`,
      r.login,
      0.9,
      1,
    );
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

  const cpu = (c: { serverCpu: number | null; loadCpu: number | null } | null | undefined) =>
    c
      ? `server CPU ${f((c.serverCpu ?? Number.NaN) * 100)}%, load generator CPU ${f((c.loadCpu ?? Number.NaN) * 100)}%`
      : 'n/a';
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? a / b : Number.NaN);
  const notes: string[] = [];
  const bareWhole = first(r.whole.bare);
  const wholeLine = (name: string, l: ServerLoad, withRatio: boolean) => {
    const x = first(l);
    const rt = withRatio ? `, ratio ${f(ratio(x?.rps, bareWhole?.rps), 2)}` : '';
    return `${name} ${f(x?.rps)} req/s (p50 ${ms(x?.p50Ms)} ms, p99 ${ms(x?.p99Ms)} ms${rt}; ${cpu(l)})`;
  };
  notes.push(
    `- Ratios: ${r.rounds} rounds; in each, the baseline then the service for ${r.roundS} s after a 1 s warm-up ` +
      `(login ${r.roundS + 1} s); the row shows the round with the median ratio, every round's ratio in brackets.`,
  );
  const held = (rounds: Turn[]) => cpu(medianRound(rounds)?.service);
  if (r.holdShare !== null) {
    notes.push(
      `- Server on its whole CPU, once each (the load generator, not the server, may set the pace when its CPU nears 100%): ` +
        `${wholeLine('bare', r.whole.bare, false)}; ${wholeLine('/health', r.whole.health, true)}; ` +
        `${wholeLine('verify-token', r.whole.verify, true)}.`,
      `- Server-bound rounds (median): bare ${cpu(medianRound(r.health)?.baseline)}; /health ${held(r.health)}; ` +
        `verify-token ${held(r.verify)}.`,
    );
  } else {
    notes.push(
      `- No server-bound runs (no cgroup CPU quota here): the ratios above include the load generator's cost. ` +
        `CPU use: /health ${held(r.health)}; verify-token ${held(r.verify)}.`,
    );
  }
  notes.push(`- Login CPU use: ${cpu(r.loginLoad)}.`);
  if (stormLogin) {
    const c = stormLogin.statusCounts;
    notes.push(
      `- Login storm (${r.connections.storm} connections, ${r.durationS} s): ${f(stormLogin.rps, 1)} logins/s succeeded, ` +
        `${f((c['503'] ?? 0) / stormLogin.durationS, 1)}/s answered 503 + Retry-After (hashing at capacity), ` +
        `login p99 ${ms(stormLogin.p99Ms)} ms.`,
    );
  }
  const algs = r.algorithms
    .map(
      (a) =>
        `${a.alg}: verify ${f(a.joseVerifyPerS)}/s through jose (WebCrypto, as the service does), ` +
        `${f(a.nodeCryptoVerifyPerS)}/s with node:crypto; sign ${f(a.nodeCryptoSignPerS)}/s with node:crypto`,
    )
    .join('; ');
  notes.push(`- Access-token signatures on one CPU: ${algs}.`);
  const steps = Object.entries(r.rssSteps)
    .map(([phase, mb]) => `${phase} ${f(mb)} MB`)
    .join(', ');
  notes.push(`- Service RSS high-water mark after each phase: ${steps}.`);
  notes.push(
    `- Whole-CPU runs and the storm: ${r.durationS} s after a ${r.warmupS} s warm-up; ${r.connections.throughput} connections ` +
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
