// Before/after figures for profile-driven changes: builds of Gatehouse (each a directory holding
// dist/src/main.js, e.g. `git archive <commit> | tar -x` then `npx tsc -p tsconfig.build.json`)
// measured in turns, each pinned like `npm run bench`, with server CPU time per response — a figure
// that other load on the machine barely moves, unlike requests per second.
//   node bench/compare.ts [--rounds 2] [--duration 4] [--cap 0.5] <build dir>...
// The environment passes through (e.g. ACCESS_TOKEN_ALG=RS256; COMPARE_DATABASE_URL for PostgreSQL);
// `<build dir>:NAME=value[,NAME=value]` adds settings for that build only, so one build can be
// measured against itself with a switch flipped (VERIFIED_TOKEN_CACHE_SIZE=0: the cache's A/B).
// --cap holds each server to that share of its CPU (cgroup quota), so the server, not the load
// generator, sets the pace (docs/benchmarks.md, "Server-bound").
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildArgs } from './build-args.ts';
import type { LoadResult } from './load.ts';
import {
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

const cli = buildArgs(process.argv.slice(2));
const rounds = cli.option('--rounds', 2);
const durationS = cli.option('--duration', 4);
const capShare = cli.option('--cap', 0);
const cap = capShare > 0 ? cpuCap(capShare) : null;
if (capShare > 0 && !cap) throw new Error('--cap: no cgroup CPU quota can be set here');
const builds = cli.builds();
const ADMIN_EMAIL = 'bench-admin@gatehouse.test';

interface Figure {
  rps: number;
  cpuUs: number;
  p99Ms: number;
}

async function measure(pid: number, url: string, headers: Record<string, string> = {}): Promise<Figure> {
  const spec = { name: 'x', url, headers, connections: 16, durationS, warmupS: 0 };
  await runNodeJson(LOAD_CPU, ['bench/load.ts', JSON.stringify([{ ...spec, durationS: 1 }])]);
  const before = cpuSeconds(pid) ?? 0;
  const out = await runNodeJson<{ results: LoadResult[] }>(LOAD_CPU, [
    'bench/load.ts',
    JSON.stringify([spec]),
  ]);
  const cpu = (cpuSeconds(pid) ?? 0) - before;
  const r = out.results[0] as LoadResult;
  return { rps: r.allRps, cpuUs: (cpu * 1e6) / (r.allRps * r.durationS), p99Ms: r.p99Ms };
}

async function mint(env: NodeJS.ProcessEnv): Promise<string> {
  const { loadConfig } = await import('../src/platform/config.ts');
  const { openDatabase } = await import('../src/platform/db/database.ts');
  const { createContext, closeContext } = await import('../src/kernel/context.ts');
  const { createLogger } = await import('../src/platform/logger.ts');
  const { openSession, PASSWORD_LOGIN } = await import('../src/identity/sessions.ts');
  const config = loadConfig(env);
  const database = openDatabase(config.databaseUrl);
  const ctx = await createContext(config, database, createLogger('silent'));
  try {
    const admin = await ctx.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', ADMIN_EMAIL)
      .executeTakeFirstOrThrow();
    return (await openSession(ctx, admin, { ip: '127.0.0.1', userAgent: 'bench' }, PASSWORD_LOGIN))
      .access_token;
  } finally {
    await closeContext(ctx);
    await database.close();
  }
}

const rows: string[] = [];
const line = (build: string, what: string, f: Figure, extra = '') =>
  rows.push(
    `| ${build} | ${what} | ${f.rps.toFixed(0)} | ${f.cpuUs.toFixed(1)} | ${f.p99Ms?.toFixed(2) ?? '—'} | ${extra} |`,
  );

for (let round = 1; round <= rounds; round++) {
  const bare = spawnNode(SERVER_CPU, ['bench/baseline-server.ts']);
  cap?.hold(bare.pid ?? 0);
  const { port: barePort } = await firstJsonLine<{ port: number }>(bare);
  line('bare Fastify', '/health', await measure(bare.pid ?? 0, `http://127.0.0.1:${barePort}/health`));
  await stopChild(bare);
  for (const { dir: build, env: buildEnv, name } of builds) {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-compare-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      // COMPARE_DATABASE_URL=postgres://… measures on PostgreSQL (where every request reads the rows).
      DATABASE_URL: process.env.COMPARE_DATABASE_URL ?? `sqlite:${join(dir, 'gatehouse.db')}`,
      PORT: String(port),
      PUBLIC_URL: base,
      ADMIN_EMAIL,
      ADMIN_PASSWORD: 'correct horse battery staple 42',
      LOG_LEVEL: 'info',
      ...buildEnv,
    };
    const t0 = performance.now();
    const service = spawnNode(SERVER_CPU, [join(build, 'dist/src/main.js')], {
      env,
      stdout: openSync(join(dir, 'service.log'), 'w'),
    });
    try {
      const startMs = await waitFor200(`${base}/health`, t0);
      cap?.hold(service.pid ?? 0);
      const pid = service.pid ?? 0;
      line(name, '/health', await measure(pid, `${base}/health`), `start ${startMs.toFixed(0)} ms`);
      const token = await mint(env);
      const verify = await measure(pid, `${base}/api/v1/verify-token`, { authorization: `Bearer ${token}` });
      line(name, '/api/v1/verify-token', verify, `peak RSS ${statusMb(pid, 'VmHWM')?.toFixed(0)} MB`);
    } finally {
      await stopChild(service);
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
cap?.remove();
process.stdout.write(
  `| build | endpoint | req/s | server CPU µs per response | p99 ms | |\n|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
);
