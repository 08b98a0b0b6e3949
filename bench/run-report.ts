// The table `npm run bench` prints: one row per target or A/B, with every round's ratio.

export interface Figure {
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

/** What one run measured, scenario by scenario and phase by phase. */
export interface Measured {
  /** Every scenario's figure per round, in round order. */
  taken: Map<string, Figure[]>;
  logins: Figure[];
  argon2: Figure[];
  health: Figure | undefined;
  healthNiceZero: Figure | undefined;
  /** Peak RSS (MB) of the servers the RSS target is about. */
  rss: Record<string, number | null>;
  /** Peak RSS (MB) of the two SQLite servers after the same rounds: npm start's flags vs plain node. */
  afterRounds: { flags: number; plain: number };
  STORM_CONNECTIONS: number;
}

export interface Row {
  name: string;
  target: string;
  ratio: number | null;
  rounds: number[];
  detail: string;
  pass: boolean | null;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** The rows of the table: each speed target of docs/benchmarks.md (and the token algorithms'), then each A/B. */
export function rowsOf({
  taken,
  logins,
  argon2,
  health,
  healthNiceZero,
  rss,
  afterRounds,
  STORM_CONNECTIONS,
}: Measured): Row[] {
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
  // The list's latency beside its rate (issue 46 quoted both: one user's statements are what it waits on).
  const withP50 = (row: Row, [a, b]: [string, string]): Row => {
    const p50 = (k: string) => median((taken.get(k) ?? []).map((f) => f.p50Ms)).toFixed(1);
    return row.ratio === null ? row : { ...row, detail: `${row.detail}; p50 ${p50(a)} vs ${p50(b)} ms` };
  };
  const loginRounds = logins.map((l, i) => l.rps / (argon2[i]?.rps ?? Number.NaN));
  const peak = Math.max(...Object.values(rss).map((v) => v ?? 0));
  const rows: Row[] = [
    ratioRow('verify-token: PostgreSQL / SQLite', 'verify postgres', 'verify sqlite', 0.7),
    ratioRow(
      'verify-token: SQLite / PostgreSQL (the embedded default the fast one)',
      'verify sqlite',
      'verify postgres',
      1,
    ),
    ratioRow('verify-token on SQLite / Gatehouse /health', 'verify sqlite', 'health sqlite', 0.5),
    withP50(ratioRow('users list (limit 20): PostgreSQL / SQLite', 'list postgres', 'list sqlite', 0.5), [
      'list postgres',
      'list sqlite',
    ]),
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
  return rows;
}

export function table(rows: Row[]): string {
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
