// The same-run A/B of the optimizations that have no setting to switch them off (docs/benchmarks.md,
// "Optimizations kept"): builds the committed tree (git archive HEAD) as it is and once per
// optimization with that optimization taken out, then measures them all in turns with
// bench/compare.ts (server CPU µs per response, start time, peak RSS). The verified-token cache has a
// setting, so it is measured as `head:VERIFIED_TOKEN_CACHE_SIZE=0`.
//   node bench/ab-builds.ts [--rounds 3] [--duration 4]
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Each variant: the file and the exact text to take out, or to put something else in its place
 * (`put`); the build fails loudly if the text is gone.
 */
const VARIANTS: Record<string, Array<{ file: string; remove: string; put?: string }>> = {
  'eager-request-logger': [
    {
      file: 'src/http/app.ts',
      remove:
        '    childLoggerFactory: (logger, bindings, options) =>\n      lazyChildLogger(logger, bindings, options) as FastifyBaseLogger,\n',
    },
    { file: 'src/http/app.ts', remove: "import { lazyChildLogger } from './logger.ts';\n" },
  ],
  'per-route-serializers': [
    {
      file: 'src/http/app.ts',
      remove: '    schemaController: { compilersFactory: { buildSerializer: sharedSerializerFactory() } },\n',
    },
    { file: 'src/http/app.ts', remove: "import { sharedSerializerFactory } from './serializers.ts';\n" },
  ],
  // SQLite: every statement prepared anew (Kysely's driver prepares each query).
  'no-statement-cache': [
    {
      file: 'src/platform/db/statement-cache.ts',
      remove: '      if (cached !== undefined && !cached.busy) return cached;\n',
    },
  ],
  // SQLite: every OAuth model save and sign-in reservation autocommitted on its own (one fsync each).
  'no-group-commit': [
    {
      file: 'src/platform/db/group-commit.ts',
      remove: "dialectOf(db) === 'postgres' || db.isTransaction ? passThrough(db) : batching(db)",
      put: 'passThrough(db)',
    },
  ],
  // SQLite: PRAGMA data_version read by every session read instead of one look per batch of reads.
  'data-version-per-read': [
    {
      file: 'src/identity/tokens/session-cache.ts',
      remove: 'if (otherWriters !== undefined) await lookAfter(otherWriters);',
      put: 'if (otherWriters !== undefined) look(otherWriters);',
    },
  ],
};

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'gatehouse-ab-'));
const build = (name: string, edits: Array<{ file: string; remove: string; put?: string }>): string => {
  const dir = join(work, name);
  execSync(`mkdir -p ${dir} && git -C ${root} archive HEAD | tar -x -C ${dir}`);
  for (const { file, remove, put = '' } of edits) {
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    if (!text.includes(remove)) throw new Error(`${name}: ${file} no longer holds the text to take out`);
    writeFileSync(path, text.replace(remove, put));
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  // The variants leave an import or a helper unused; that is all the compiler may complain of.
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json', '--noUnusedLocals', 'false'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return dir;
};

// --sizing: the variants named by --only (all when absent) on the sizing run's loads
// (bench/ab-sizing.ts) instead of bench/compare.ts's.
const rest = process.argv.slice(2);
const sizing = rest.includes('--sizing');
const onlyAt = rest.indexOf('--only');
const only = onlyAt >= 0 ? (rest[onlyAt + 1] ?? '').split(',') : null;
const passed = rest.filter((a, i) => a !== '--sizing' && i !== onlyAt && i !== onlyAt + 1);
try {
  const head = build('head', []);
  const chosen = Object.entries(VARIANTS).filter(([name]) => only === null || only.includes(name));
  const variants = chosen.map(([name, edits]) => build(name, edits));
  if (sizing) {
    execFileSync(process.execPath, [join(root, 'bench/ab-sizing.ts'), ...passed, head, ...variants], {
      cwd: root,
      stdio: 'inherit',
    });
  } else
    execFileSync(
      process.execPath,
      [join(root, 'bench/compare.ts'), ...passed, head, `${head}:VERIFIED_TOKEN_CACHE_SIZE=0`, ...variants],
      { cwd: root, stdio: 'inherit' },
    );
} finally {
  rmSync(work, { recursive: true, force: true });
}
