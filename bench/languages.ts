// What the ten languages cost (docs/benchmarks.md, "Languages"; API §24), run by `npm run bench`
// (alone: `npm run bench -- --only languages`). Gatehouse started as `npm start` starts it, pinned
// to CPU 0 (SQLite), loads from CPU 1:
// - the sign-in page (GET /account/sign-in) in German against English, 16 connections, in turns
//   within each round (target ≥ 0.95×);
// - RSS at rest (VmRSS, the server idle 3 s after it started and served the sign-in page once in
//   each language) with the ten built-in catalogs against a copy of the same build whose locales/
//   holds English alone, both started afresh each round (target ≤ +10 MB).
import { cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LoadResult, LoadSpec } from './load.ts';
import { LOAD_CPU, runNodeJson, statusMb, stopChild } from './processes.ts';
import { median, type Row } from './run-report.ts';
import { type Server, startGatehouse } from './run-servers.ts';

export interface LanguagesOptions {
  rounds: number;
  roundS: number;
  /** A directory for the SQLite files and the English-only copy of the build. */
  dir: string;
  log: (line: string) => void;
}

const CONNECTIONS = 16;
const TAGS = ['en', 'de', 'fr', 'es', 'pt-BR', 'it', 'nl', 'ja', 'zh-Hans', 'ar'];

async function pageRps(s: Server, lang: string, roundS: number): Promise<number> {
  const spec: LoadSpec = {
    name: `sign-in ${lang}`,
    url: `${s.base}/account/sign-in?lang=${lang}`,
    connections: CONNECTIONS,
    durationS: roundS,
    warmupS: 1,
  };
  const out = await runNodeJson<{ results: LoadResult[] }>(LOAD_CPU, [
    'bench/load.ts',
    JSON.stringify([spec]),
  ]);
  const r = out.results[0] as LoadResult;
  if (r.rps === 0 || Object.keys(r.statusCounts).some((code) => !code.startsWith('2')))
    throw new Error(`${spec.name}: answers ${JSON.stringify(r.statusCounts)}`);
  return r.rps;
}

/** This build (dist/) with English alone in locales/: the catalogs are read from beside dist/. */
function englishOnlyBuild(dir: string): string {
  const copy = join(dir, 'english-only');
  mkdirSync(join(copy, 'locales'), { recursive: true });
  for (const part of ['dist', 'web', 'assets']) cpSync(part, join(copy, part), { recursive: true });
  cpSync('locales/en.json', join(copy, 'locales/en.json'));
  cpSync('package.json', join(copy, 'package.json'));
  symlinkSync(resolve('node_modules'), join(copy, 'node_modules'));
  return copy;
}

const env = (dir: string, name: string) => ({
  DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}`,
  API_FORM: 'full',
  SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
  WEBAUTHN_RP_ID: 'localhost',
  WEBAUTHN_ORIGINS: 'http://localhost',
});

/** VmRSS (MB) of a server started afresh, at rest after one sign-in page in each language. */
async function restingRss(name: string, dir: string, cwd?: string): Promise<number> {
  const s = await startGatehouse(name, env(dir, name), false, cwd);
  try {
    for (const tag of TAGS) {
      const res = await fetch(`${s.base}/account/sign-in?lang=${tag}`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${name}: sign-in page ${tag} answered ${res.status}`);
    }
    await new Promise((r) => setTimeout(r, 3000));
    return statusMb(s.child.pid ?? 0, 'VmRSS') ?? Number.NaN;
  } finally {
    await stopChild(s.child);
  }
}

/** The languages rows. */
export async function runLanguages(o: LanguagesOptions): Promise<Row[]> {
  const pages = await startGatehouse('languages', env(o.dir, 'languages'));
  const de: number[] = [];
  const en: number[] = [];
  try {
    for (let round = 1; round <= o.rounds; round++) {
      en.push(await pageRps(pages, 'en', o.roundS));
      de.push(await pageRps(pages, 'de', o.roundS));
      o.log(
        `languages round ${round}/${o.rounds}: sign-in page en ${en.at(-1)?.toFixed(0)}, de ${de.at(-1)?.toFixed(0)} req/s`,
      );
    }
  } finally {
    await stopChild(pages.child);
  }
  const copy = englishOnlyBuild(o.dir);
  const ten: number[] = [];
  const one: number[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    one.push(await restingRss(`english-only-${round}`, o.dir, copy));
    ten.push(await restingRss(`ten-languages-${round}`, o.dir));
    o.log(
      `languages round ${round}/${o.rounds}: RSS at rest, English only ${one.at(-1)?.toFixed(1)} MB, ten ${ten.at(-1)?.toFixed(1)} MB`,
    );
  }
  const pageRounds = de.map((x, i) => x / (en[i] ?? Number.NaN));
  const rssRounds = ten.map((x, i) => x - (one[i] ?? Number.NaN));
  const pageRatio = median(pageRounds);
  const rssDelta = median(rssRounds);
  return [
    {
      name: 'sign-in page: German / English (req/s)',
      target: '≥ 0.95',
      ratio: pageRatio,
      rounds: pageRounds,
      detail: `${Math.round(median(de))} vs ${Math.round(median(en))} req/s (medians)`,
      pass: pageRatio >= 0.95,
    },
    {
      name: 'RSS at rest: ten languages − English only (MB)',
      target: '≤ +10 MB',
      ratio: rssDelta,
      rounds: rssRounds,
      detail: `${median(ten).toFixed(1)} vs ${median(one).toFixed(1)} MB (medians, VmRSS)`,
      pass: rssDelta <= 10,
    },
  ];
}
