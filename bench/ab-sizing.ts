// The same-run A/B of builds on the sizing run's loads (bench/sizing.ts: logins, refreshes, OAuth
// refresh grants, verify-token, client-credentials grants, introspection), on SQLite, each server
// pinned like `npm run bench -- --sizing`, the builds measured in turns (the order alternates per
// round). Prints, per figure and build, the median requests per second and the server's CPU
// microseconds per answer (the steadier figure on a busy machine), and each build's ratio to the
// first. bench/ab-builds.ts --sizing builds the variants and runs this.
//   node bench/ab-sizing.ts [--rounds 3] [--duration 3] <build dir>[:NAME=value,…]...
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildArgs } from './build-args.ts';
import { stopChild } from './processes.ts';
import { round, type Setup, start } from './sizing.ts';

const cli = buildArgs(process.argv.slice(2));
const rounds = cli.option('--rounds', 3);
const roundS = cli.option('--duration', 3);
const builds = cli.builds();
if (builds.length === 0) throw new Error('give at least one build directory');

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const work = mkdtempSync(join(tmpdir(), 'gatehouse-ab-sizing-'));
const sets: Setup[] = [];
const rps = builds.map(() => new Map<string, number[]>());
const cpu = builds.map(() => new Map<string, number[]>());
try {
  for (const [i, b] of builds.entries()) {
    const dir = join(work, String(i));
    mkdirSync(dir);
    sets.push(await start('sqlite', dir, null, b.dir, b.env));
  }
  for (let r = 0; r < rounds; r++) {
    const order = builds.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) {
      const cpuUs: Record<string, number> = {};
      const figures = await round(sets[i] as Setup, roundS, cpuUs);
      for (const [name, value] of Object.entries(figures)) {
        rps[i]?.set(name, [...(rps[i]?.get(name) ?? []), value]);
        cpu[i]?.set(name, [...(cpu[i]?.get(name) ?? []), cpuUs[name] ?? Number.NaN]);
      }
      process.stderr.write(`round ${r + 1}/${rounds}: ${builds[i]?.name} done\n`);
    }
  }
  const names = [...(rps[0]?.keys() ?? [])];
  const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  for (const name of names) {
    console.log(`\n${name}`);
    const first = { rps: median(rps[0]?.get(name) ?? []), cpu: median(cpu[0]?.get(name) ?? []) };
    for (const [i, b] of builds.entries()) {
      const r = rps[i]?.get(name) ?? [];
      const c = cpu[i]?.get(name) ?? [];
      console.log(
        `  ${b.name.padEnd(36)} ${fmt(median(r)).padStart(7)}/s (${r.map(fmt).join(', ')})  ` +
          `${fmt(median(c)).padStart(6)} µs CPU/answer (${c.map(fmt).join(', ')})  ` +
          `req/s ×${(median(r) / first.rps).toFixed(2)}, CPU ×${(first.cpu / median(c)).toFixed(2)}`,
      );
    }
  }
} finally {
  for (const s of sets) await stopChild(s.server.child);
  rmSync(work, { recursive: true, force: true });
}
