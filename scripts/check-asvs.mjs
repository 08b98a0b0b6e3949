// The check of docs/security/asvs.md (`npm run asvs`, run in CI): plain Node, no dependencies.
// The map's tables have five cells per row: requirement, level, paraphrase, verdict, proof or
// reason. It fails (exit 1, one line per problem) when a `tested` row names a test file that does
// not exist or a title that no it()/describe() of that file has; a row has no verdict or an unknown
// one; a `not applicable` row gives no reason; a `gap` row gives no plan; any row is `pending`; a
// requirement repeats, is not a Level 1 or 2 requirement of V6–V10, or carries the wrong level; or
// a Level 1 or 2 requirement of V6–V10 of ASVS 5.0.0 has no row. The rule for titles is in
// docs/security/asvs.md ("How the check runs").
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The Level 1 and 2 requirements of chapters V6–V10 of OWASP ASVS 5.0.0 (tag v5.0.0_release,
 * 5.0/en/0x15-V6 … 0x19-V10), with their levels. Level 3 requirements are not listed.
 */
const LEVELS = {
  1: [
    '6.1.1',
    '6.2.1',
    '6.2.2',
    '6.2.3',
    '6.2.4',
    '6.2.5',
    '6.2.6',
    '6.2.7',
    '6.2.8',
    '6.3.1',
    '6.3.2',
    '6.4.1',
    '6.4.2',
    '7.2.1',
    '7.2.2',
    '7.2.3',
    '7.2.4',
    '7.4.1',
    '7.4.2',
    '8.1.1',
    '8.2.1',
    '8.2.2',
    '8.3.1',
    '9.1.1',
    '9.1.2',
    '9.1.3',
    '9.2.1',
    '10.4.1',
    '10.4.2',
    '10.4.3',
    '10.4.4',
    '10.4.5',
  ],
  2: [
    '6.1.2',
    '6.1.3',
    '6.2.9',
    '6.2.10',
    '6.2.11',
    '6.2.12',
    '6.3.3',
    '6.3.4',
    '6.4.3',
    '6.4.4',
    '6.5.1',
    '6.5.2',
    '6.5.3',
    '6.5.4',
    '6.5.5',
    '6.6.1',
    '6.6.2',
    '6.6.3',
    '6.8.1',
    '6.8.2',
    '6.8.3',
    '6.8.4',
    '7.1.1',
    '7.1.2',
    '7.1.3',
    '7.3.1',
    '7.3.2',
    '7.4.3',
    '7.4.4',
    '7.4.5',
    '7.5.1',
    '7.5.2',
    '7.6.1',
    '7.6.2',
    '8.1.2',
    '8.2.3',
    '8.4.1',
    '9.2.2',
    '9.2.3',
    '9.2.4',
    '10.1.1',
    '10.1.2',
    '10.2.1',
    '10.2.2',
    '10.3.1',
    '10.3.2',
    '10.3.3',
    '10.3.4',
    '10.4.6',
    '10.4.7',
    '10.4.8',
    '10.4.9',
    '10.4.10',
    '10.4.11',
    '10.5.1',
    '10.5.2',
    '10.5.3',
    '10.5.4',
    '10.5.5',
    '10.6.1',
    '10.6.2',
    '10.7.1',
    '10.7.2',
    '10.7.3',
  ],
};

/** Requirement number → level, in ASVS order. */
export const EXPECTED = new Map(
  Object.entries(LEVELS)
    .flatMap(([level, ids]) => ids.map((id) => [id, Number(level)]))
    .sort(([a], [b]) => compareIds(a, b)),
);

export const VERDICTS = ['tested', 'not applicable', 'gap', 'pending'];

function compareIds(a, b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i += 1) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

/** A table row split on unescaped pipes, without the outer ones; `\|` becomes `|` in each cell. */
function cells(line) {
  const inner = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replaceAll('\\|', '|'));
}

/** CommonMark code spans of a cell: [{code, before}], `before` being the text since the last span. */
export function codeSpans(text) {
  const spans = [];
  let i = 0;
  let since = 0;
  while (i < text.length) {
    if (text[i] !== '`') {
      i += 1;
      continue;
    }
    let n = 0;
    while (text[i + n] === '`') n += 1;
    const fence = '`'.repeat(n);
    let j = i + n;
    let end = -1;
    while (j < text.length) {
      const at = text.indexOf(fence, j);
      if (at === -1) break;
      if (text[at + n] !== '`' && text[at - 1] !== '`') {
        end = at;
        break;
      }
      j = at + 1;
      while (text[j] === '`') j += 1;
    }
    if (end === -1) {
      i += n;
      continue;
    }
    let code = text.slice(i + n, end);
    if (code.length > 1 && code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') {
      code = code.slice(1, -1);
    }
    spans.push({ code, before: text.slice(since, i) });
    i = end + n;
    since = i;
  }
  return spans;
}

const TEST_FILE = /^test\/[\w./-]+\.test\.ts$/;

/** The proofs a cell names: `test/<path>.test.ts` › it|describe `title`, one or more. */
export function proofsOf(text) {
  const spans = codeSpans(text);
  const proofs = [];
  for (let k = 0; k < spans.length; k += 1) {
    const file = spans[k].code;
    if (!TEST_FILE.test(file)) continue;
    const next = spans[k + 1];
    const joint = /^\s*›\s*(it|describe)\s*$/.exec(next?.before ?? '');
    if (!next || !joint) {
      proofs.push({ file, kind: null, title: null });
      continue;
    }
    proofs.push({ file, kind: joint[1], title: next.code });
    k += 1;
  }
  return proofs;
}

/** Reads a JavaScript string literal starting at `at` (a quote or backtick). */
function readLiteral(src, at) {
  const quote = src[at];
  let text = '';
  const segments = [];
  let segment = '';
  let i = at + 1;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\') {
      const e = src[i + 1];
      const plain = { n: '\n', t: '\t', r: '\r' }[e] ?? e;
      text += plain;
      segment += plain;
      i += 2;
      continue;
    }
    if (c === quote) return { text, template: quote === '`', segments: [...segments, segment] };
    if (quote === '`' && c === '$' && src[i + 1] === '{') {
      let depth = 1;
      let j = i + 2;
      while (j < src.length && depth > 0) {
        if (src[j] === '{') depth += 1;
        else if (src[j] === '}') depth -= 1;
        j += 1;
      }
      text += src.slice(i, j);
      segments.push(segment);
      segment = '';
      i = j;
      continue;
    }
    if (quote !== '`' && c === '\n') return null;
    text += c;
    segment += c;
    i += 1;
  }
  return null;
}

/** The it()/test()/describe() titles written in a test file's source. */
export function titlesIn(src) {
  const titles = [];
  const call = /\b(describe|it|test)(?:\.(?:only|skip|todo))?\(\s*(['"`])/g;
  for (let m = call.exec(src); m !== null; m = call.exec(src)) {
    const literal = readLiteral(src, m.index + m[0].length - 1);
    if (!literal) continue;
    titles.push({ kind: m[1] === 'describe' ? 'describe' : 'it', ...literal });
  }
  return titles;
}

const EDGES = /^[\s([{:,;]+|[\s)\]}:,;([{]+$/g;

/**
 * Whether a title named in the map is one the file has: exactly a plain title; for a template
 * title, the template as written (`${…}` included) or one of its literal parts, edges trimmed of
 * spaces and ( ) [ ] { } : , ; — at least 8 characters.
 */
export function titleMatches(named, title) {
  if (named === title.text) return true;
  if (!title.template) return false;
  return title.segments.some((s) => {
    const part = s.replace(EDGES, '');
    return part.length >= 8 && part === named;
  });
}

/** The requirement rows of the map. */
export function parseMap(text) {
  const rows = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    if (!line.trim().startsWith('|')) return;
    const c = cells(line);
    const id = (c[0] ?? '').replace(/[*`]/g, '').trim();
    if (!/^\d+\.\d+\.\d+$/.test(id)) return;
    rows.push({
      line: index + 1,
      id,
      cells: c.length,
      level: (c[1] ?? '').replace(/[*`L]/g, '').trim(),
      requirement: c[2] ?? '',
      verdict: (c[3] ?? '').replace(/[*`_]/g, '').trim().toLowerCase(),
      evidence: c[4] ?? '',
    });
  });
  return rows;
}

/**
 * Checks the map. `read(path)` gives a file of the repository (a path like test/auth/login.test.ts)
 * or null when it does not exist; `expected` is the requirement list (default: EXPECTED).
 */
export function checkMap(text, { read, expected = EXPECTED }) {
  const rows = parseMap(text);
  const problems = [];
  const problem = (row, kind, message) =>
    problems.push({ line: row?.line ?? 0, id: row?.id ?? null, kind, message });
  const seen = new Map();
  const titleCache = new Map();
  const titlesOf = (file) => {
    if (!titleCache.has(file)) {
      const src = read(file);
      titleCache.set(file, src === null ? null : titlesIn(src));
    }
    return titleCache.get(file);
  };
  for (const row of rows) {
    if (seen.has(row.id)) problem(row, 'duplicate', `listed again (first on line ${seen.get(row.id)})`);
    else seen.set(row.id, row.line);
    if (row.cells !== 5)
      problem(
        row,
        'shape',
        `has ${row.cells} cells; a row has 5 (requirement, level, paraphrase, verdict, proof or reason)`,
      );
    const level = expected.get(row.id);
    if (level === undefined)
      problem(row, 'unknown', 'is not a Level 1 or 2 requirement of V6–V10 in ASVS 5.0.0');
    else if (String(level) !== row.level)
      problem(row, 'level', `is Level ${level} in ASVS 5.0.0, the row says "${row.level}"`);
    const evidence = row.evidence.trim();
    if (row.verdict === '') {
      problem(row, 'verdict', 'has no verdict');
      continue;
    }
    if (!VERDICTS.includes(row.verdict)) {
      problem(row, 'verdict', `has an unknown verdict "${row.verdict}" (one of: ${VERDICTS.join(', ')})`);
      continue;
    }
    if (row.verdict === 'pending') {
      problem(row, 'pending', `is pending: ${evidence.replace(/^PENDING:\s*/, '') || '(nothing said)'}`);
      continue;
    }
    if (row.verdict === 'not applicable') {
      if (evidence.replace(/[\s—–-]/g, '') === '')
        problem(row, 'reason', 'is not applicable without a reason');
      continue;
    }
    if (row.verdict === 'gap') {
      if (evidence.replace(/^GAP:\s*/, '').replace(/[\s—–-]/g, '') === '')
        problem(row, 'reason', 'is a gap without a plan');
      continue;
    }
    const proofs = proofsOf(row.evidence);
    if (proofs.length === 0)
      problem(row, 'proof', 'is tested but names no test (`test/<path>.test.ts` › it `title`)');
    for (const proof of proofs) {
      if (proof.file.split('/').includes('..')) {
        problem(row, 'proof', `names ${proof.file}, outside test/`);
        continue;
      }
      const titles = titlesOf(proof.file);
      if (titles === null) {
        problem(row, 'file', `names ${proof.file}, which does not exist`);
        continue;
      }
      if (proof.title === null) {
        problem(row, 'proof', `names ${proof.file} without › it \`title\` or › describe \`title\``);
        continue;
      }
      const found = titles.some((t) => t.kind === proof.kind && titleMatches(proof.title, t));
      if (!found)
        problem(row, 'title', `names ${proof.kind} "${proof.title}", which ${proof.file} does not have`);
    }
  }
  for (const [id, level] of expected) {
    if (!seen.has(id)) problem(null, 'missing', `${id} (Level ${level}) has no row`);
  }
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, rows.filter((r) => r.verdict === v).length]));
  return { rows, problems, counts };
}

/** The report: one line per problem, then one line saying what it adds up to. */
export function report(result, name = 'docs/security/asvs.md') {
  const lines = result.problems.map((p) =>
    p.id === null ? `${name}: ${p.message}` : `${name}:${p.line}: ${p.id} ${p.message}`,
  );
  const pending = result.problems.filter((p) => p.kind === 'pending').length;
  const other = result.problems.length - pending;
  const c = result.counts;
  if (result.problems.length === 0) {
    lines.push(
      `asvs: ${result.rows.length} requirements mapped: ${c.tested} tested, ${c['not applicable']} not applicable, ${c.gap} gap`,
    );
  } else if (other === 0) {
    lines.push(
      `asvs: fails only for ${pending} pending row(s): every other row checks out; replace each PENDING with the tests that prove it`,
    );
  } else {
    lines.push(`asvs: ${other} problem(s)${pending ? `, and ${pending} pending row(s)` : ''}`);
  }
  return lines;
}

function main() {
  const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
  const mapPath = process.argv[2] ? resolve(process.argv[2]) : join(root, 'docs/security/asvs.md');
  const read = (file) => {
    try {
      return readFileSync(join(root, file), 'utf8');
    } catch {
      return null;
    }
  };
  const result = checkMap(readFileSync(mapPath, 'utf8'), { read });
  const lines = report(result);
  (result.problems.length === 0 ? console.log : console.error)(lines.join('\n'));
  process.exitCode = result.problems.length === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
