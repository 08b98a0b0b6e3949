import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Spelled in two parts so that this file does not cite it itself.
const MISSING_FILE = ['API', 'md'].join('.');

function filesUnder(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) filesUnder(path, out);
    else if (/\.(ts|mjs|md|sh)$/.test(entry)) out.push(path);
  }
  return out;
}

const sources = ['src', 'test', 'scripts', 'bench', 'docs']
  .flatMap((d) => filesUnder(join(ROOT, d)))
  .concat(join(ROOT, 'README.md'));
const apiSections = new Set(
  [...readFileSync(join(ROOT, 'docs/api.md'), 'utf8').matchAll(/^<a id="s(\d+)"><\/a>$/gm)].map((m) => m[1]),
);

describe('documentation references', () => {
  it(`regression: the docs cited ${MISSING_FILE}, which is not in the repository; cite docs/api.md §N`, () => {
    const offenders = sources.filter((f) => readFileSync(f, 'utf8').includes(MISSING_FILE));
    assert.deepEqual(
      offenders.map((f) => relative(ROOT, f)),
      [],
      `write "docs/api.md §N" in code, "[API §N](api.md#sN)" in docs/ (sed -i 's/${MISSING_FILE} §/docs\\/api.md §/g' FILE)`,
    );
  });

  it('every docs/api.md §N and api.md#sN names a section that exists', () => {
    assert.ok(apiSections.size >= 15, 'docs/api.md has its numbered sections');
    const missing: string[] = [];
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:docs\/api\.md §|api\.md#s)(\d+)/g)) {
        if (!apiSections.has(m[1] ?? '')) missing.push(`${relative(ROOT, file)}: ${m[0]}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('every relative link in README.md and docs/ points at a file that exists', () => {
    const broken: string[] = [];
    for (const file of sources.filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] ?? '';
        if (/^[a-z]+:/.test(target) || target.startsWith('#')) continue;
        const path = target.split('#')[0] ?? '';
        if (!existsSync(join(dirname(file), path))) broken.push(`${relative(ROOT, file)}: ${target}`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('the README links the API reference', () => {
    assert.match(readFileSync(join(ROOT, 'README.md'), 'utf8'), /\]\(docs\/api\.md\)/);
  });
});
