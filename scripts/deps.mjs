// `npm run deps`: the import rules of .dependency-cruiser.cjs (docs/architecture.md, "The dependency
// rule"), checked by dependency-cruiser. dependency-cruiser reads TypeScript through the TypeScript
// compiler's JavaScript API (typescript <7), which TypeScript 7 no longer has; so this script hands
// it the same tree as JavaScript: every src/ file with its types erased by Node's own
// `stripTypeScriptTypes` (positions kept), each type-only import kept as a call
// `typeOnlyImport('<specifier>')` (which .dependency-cruiser.cjs declares as an exotic require, so a
// type-only dependency obeys every rule like any other and the no-circular rule can tell it apart),
// `.ts` specifiers and names turned into `.mjs`, in a temporary folder. The report names the .ts files again.
// Then scripts/table-owners.mjs checks that every table is written only in its owner's folder
// (src/platform/db/table-owners.ts). Exit status: non-zero when either finds a violation.
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
      const stripped = stripTypeScriptTypes(source, { mode: 'strip' });
      // A module also imported for a value keeps only that (plain) dependency.
      const typeOnly = [...new Set([...source.matchAll(TYPE_ONLY)].map((m) => m[1]))]
        .filter((specifier) => !stripped.includes(`'${specifier}'`))
        .map((specifier) => `typeOnlyImport('${specifier}');`);
      const code = `${stripped}\n${typeOnly.join('\n')}\n`;
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
  // Then the table owners (scripts/table-owners.mjs): a write of a table outside its owner's folder.
  const owners = spawnSync(process.execPath, [join(root, 'scripts/table-owners.mjs')], {
    cwd: root,
    encoding: 'utf8',
  });
  process.stdout.write(`${owners.stdout}${owners.stderr}`);
  process.exitCode = run.status === 0 && owners.status === 0 ? 0 : 1;
} finally {
  rmSync(mirror, { recursive: true, force: true });
}
