// The users list on both engines, builds in turns (docs/benchmarks.md, "The users list on
// PostgreSQL"): each build (a directory holding dist/src/main.js, e.g. `git archive <commit> | tar -x`
// then `npx tsc -p tsconfig.build.json`; `.` is this tree's dist/) is started on SQLite and on
// PostgreSQL as `npm start` starts it, pinned to CPU 0 like every server of `npm run bench`, with 50
// users; `GET /api/v1/users?limit=20` is loaded from CPU 1 (16 connections), every server once per
// round, one right after the other. Figures: req/s, p50, and server CPU µs per response (which other
// load on the machine barely moves).
//   node bench/users-list-ab.ts [--rounds 3] [--duration 3] [--database-url postgres://…] <build dir>...
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { LoadResult } from './load.ts';
import { cpuSeconds, LOAD_CPU, runNodeJson, stopChild } from './processes.ts';
import { addUsers, createPgDatabase, dropPgDatabase, type Server, startGatehouse } from './run-servers.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '3' },
    'database-url': { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const DURATION_S = Number(values.duration);
const PG_URL =
  values['database-url'] ??
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';
const builds = positionals.length > 0 ? positionals : ['.'];
const log = (line: string) => process.stderr.write(`users-list-ab: ${line}\n`);

interface Figure {
  rps: number;
  p50Ms: number;
  cpuUs: number;
}

async function measure(server: Server): Promise<Figure> {
  const spec = {
    name: server.name,
    url: `${server.base}/api/v1/users?limit=20`,
    headers: { authorization: `Bearer ${server.token}` },
    connections: 16,
    durationS: DURATION_S,
    warmupS: 1,
  };
  const pid = server.child.pid ?? 0;
  const before = cpuSeconds(pid) ?? 0;
  const out = await runNodeJson<{ results: LoadResult[] }>(LOAD_CPU, [
    'bench/load.ts',
    JSON.stringify([spec]),
  ]);
  const cpu = (cpuSeconds(pid) ?? 0) - before;
  const r = out.results[0] as LoadResult;
  if (r.rps === 0) throw new Error(`${server.name}: no 2xx answers`);
  // The CPU of the warm-up second is in `cpu` too: count its answers at the measured rate.
  return { rps: r.rps, p50Ms: r.p50Ms, cpuUs: (cpu * 1e6) / (r.allRps * (r.durationS + spec.warmupS)) };
}

/** A database of this run's own for each build; null without PostgreSQL (its rows are skipped). */
const createDatabase = (n: number) => createPgDatabase(PG_URL, log, `gatehouse_list_ab_${process.pid}_${n}`);

const servers: Server[] = [];
const databases: string[] = [];
const files: string[] = [];
try {
  for (const build of builds) {
    const cwd = resolve(build);
    const file = join(tmpdir(), `users-list-ab-${process.pid}-${files.length}.db`);
    files.push(file);
    const sqlite = await startGatehouse(`${build} sqlite`, { DATABASE_URL: `sqlite:${file}` }, false, cwd);
    servers.push(sqlite);
    await addUsers(sqlite, 50);
    const pgUrl = await createDatabase(files.length);
    if (pgUrl) {
      databases.push(pgUrl);
      const postgres = await startGatehouse(`${build} postgres`, { DATABASE_URL: pgUrl }, false, cwd);
      servers.push(postgres);
      await addUsers(postgres, 50);
    }
  }
  const taken = new Map<string, Figure[]>(servers.map((s) => [s.name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    log(`round ${round}/${ROUNDS}`);
    for (const s of servers) taken.get(s.name)?.push(await measure(s));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  process.stdout.write(
    '| server | req/s (median) | p50 ms | CPU µs per response | rounds (req/s) |\n|---|---|---|---|---|\n',
  );
  for (const [name, figures] of taken) {
    process.stdout.write(
      `| ${name} | ${median(figures.map((f) => f.rps)).toFixed(0)} | ${median(figures.map((f) => f.p50Ms)).toFixed(2)} | ${median(figures.map((f) => f.cpuUs)).toFixed(0)} | ${figures.map((f) => f.rps.toFixed(0)).join(', ')} |\n`,
    );
  }
} finally {
  for (const s of servers) await stopChild(s.child);
  for (const url of databases) await dropPgDatabase(PG_URL, url).catch(() => {});
  for (const file of files)
    for (const end of ['', '-wal', '-shm', '.lock']) rmSync(`${file}${end}`, { force: true });
}
