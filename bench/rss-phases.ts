// Where Gatehouse's peak RSS comes from: the sizing run's loads (bench/sizing.ts: logins, refreshes,
// OAuth refresh chains, verify-token, grants, introspection) on SQLite with `oauth` on, VmHWM and
// VmRSS read after the set-up and after each load. Several builds or settings are measured in
// turns (round r starts them in order r, r+1, …), each on a fresh server and database, so the peaks
// compare within one run (docs/benchmarks.md, "Where the peak RSS goes").
//   node bench/rss-phases.ts [--rounds 1] [--loads 2] [--round-duration 3] [--probe]
//                            [<build dir>[:NAME=value,…]]…
// A build dir holds dist/src/main.js (and web/); without one, this checkout's. --loads: rounds of
// the loads on each server (the sizing run's --rounds, 2 there too). --probe preloads
// bench/mem-probe.mjs and prints the process's own view (process.memoryUsage, V8's spaces) and
// /proc/<pid>/smaps summed by mapping.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildArgs } from './build-args.ts';
import { statusMb, stopChild } from './processes.ts';
import { round, start } from './sizing.ts';

const cli = buildArgs(process.argv.slice(2));
const rounds = cli.option('--rounds', 1);
const roundS = cli.option('--round-duration', 3);
const loads = cli.option('--loads', 2);
const probe = cli.flag('--probe');
const builds = cli.builds(['.']);

/** /proc/<pid>/smaps summed by kind: file-backed text and data, glibc's [heap], other anonymous. */
function smapsByKind(pid: number): Record<string, number> {
  const kinds: Record<string, number> = {};
  let kind = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const path = head[2] ?? '';
      kind = path === '' ? 'anon' : path.startsWith('[') ? path : (path.split('/').pop() ?? path);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kinds[kind] = (kinds[kind] ?? 0) + Number(rss[1]) / 1024;
  }
  return Object.fromEntries(
    Object.entries(kinds)
      .filter(([, v]) => v >= 0.5)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, Math.round(v * 10) / 10]),
  );
}

async function readProbe(pid: number, file: string): Promise<unknown> {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGWINCH');
  for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
  return JSON.parse(readFileSync(file, 'utf8'));
}

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-rss-'));
const peaks = new Map<string, number[]>(builds.map((b) => [b.name, []]));
const speeds = new Map<string, Array<Record<string, number>>>(builds.map((b) => [b.name, []]));
try {
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < builds.length; k++) {
      const b = builds[(r + k) % builds.length] as (typeof builds)[number];
      const probeFile = join(dir, `probe-${r}-${k}.json`);
      const env = probe
        ? {
            ...b.env,
            NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${resolve('bench/mem-probe.mjs')}`,
            MEM_PROBE_FILE: probeFile,
          }
        : b.env;
      const set = await start('sqlite', mkdtempSync(join(dir, 'db-')), null, b.dir, env);
      const pid = set.server.child.pid ?? 0;
      const read = async (phase: string) => {
        const hwm = statusMb(pid, 'VmHWM')?.toFixed(1);
        const rss = statusMb(pid, 'VmRSS')?.toFixed(1);
        console.log(`${b.name} round ${r + 1} ${phase}: VmHWM ${hwm} VmRSS ${rss} MiB`);
        if (probe) {
          console.log(`  ${JSON.stringify(await readProbe(pid, probeFile))}`);
          const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
          const huge = /AnonHugePages:\s+(\d+)/.exec(rollup)?.[1];
          console.log(`  smaps ${JSON.stringify(smapsByKind(pid))} AnonHugePages ${huge} kB`);
        }
      };
      await read('set up');
      for (let l = 1; l <= loads; l++) {
        const cpuUs: Record<string, number> = {};
        const figures = await round(set, roundS, cpuUs, (load) => read(`${load} ${l}`));
        const whole = (o: Record<string, number>) =>
          JSON.stringify(Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round(v)])));
        console.log(
          `${b.name} round ${r + 1} req/s ${whole(figures)}; server CPU µs per answer ${whole(cpuUs)}`,
        );
        speeds.get(b.name)?.push(figures);
      }
      peaks.get(b.name)?.push(statusMb(pid, 'VmHWM') ?? 0);
      await stopChild(set.server.child);
    }
  }
  for (const b of builds) {
    const p = (peaks.get(b.name) ?? []).map((v) => v.toFixed(1)).join(' / ');
    const s = (name: string) => (speeds.get(b.name) ?? []).map((f) => Math.round(f[name] ?? 0)).join(' / ');
    console.log(
      `${b.name}: peak ${p} MiB; login ${s('login')}; verify ${s('verify')}; grant ${s('grant')} req/s`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
