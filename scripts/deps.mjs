// `npm run deps`: the import rules of .dependency-cruiser.cjs (docs/architecture.md, "The dependency
// rule"), checked by dependency-cruiser. dependency-cruiser reads TypeScript through the TypeScript
// compiler's JavaScript API (typescript <7), which TypeScript 7 no longer has; so this script hands
// it the same tree as JavaScript: every src/ file with its types erased by Node's own
// `stripTypeScriptTypes` (positions kept), each type-only import kept as a bare import (a type-only
// dependency counts like any other), `.ts` specifiers and names turned into `.mjs`, in a temporary
// folder. The report names the .ts files again. Exit status: dependency-cruiser's (non-zero on a
// violation).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

process.removeAllListeners('warning'); // stripTypeScriptTypes is still flagged experimental
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const mirror = mkdtempSync(join(tmpdir(), 'gatehouse-deps-'));
const TYPE_ONLY = /(?:^|[\n;])\s*(?:import|export)\s+type\s[^;]*?\bfrom\s*'([^']+)'/g;
const TS_SPECIFIER = /(['"])(\.{1,2}\/[^'"]*?)\.ts\1/g;

function mirrorTree(dir) {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      mirrorTree(path);
    } else if (entry.name.endsWith('.ts')) {
      const source = readFileSync(join(root, path), 'utf8');
      const typeOnly = [...source.matchAll(TYPE_ONLY)].map((m) => `import '${m[1]}';`);
      const code = `${stripTypeScriptTypes(source, { mode: 'strip' })}\n${typeOnly.join('\n')}\n`;
      mkdirSync(join(mirror, dir), { recursive: true });
      writeFileSync(join(mirror, path.replace(/\.ts$/, '.mjs')), code.replace(TS_SPECIFIER, '$1$2.mjs$1'));
    }
  }
}

try {
  mirrorTree('src');
  const run = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs'),
      '--config',
      join(root, '.dependency-cruiser.cjs'),
      '--output-type',
      'err',
      'src',
    ],
    { cwd: mirror, encoding: 'utf8' },
  );
  const report = `${run.stdout}${run.stderr}`.replace(/(src\/[\w./-]+?)\.mjs\b/g, '$1.ts');
  process.stdout.write(report);
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(mirror, { recursive: true, force: true });
}
