import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkMap, EXPECTED, type Problem, parseMap, report, VERDICTS } from '../../scripts/check-asvs.mjs';

/*
 * The check of docs/security/asvs.md (scripts/check-asvs.mjs, `npm run asvs` in CI) on small
 * synthetic maps, so the checker itself is tested: a map that names a test file that is not there,
 * a title no test has, a pending row or a repeated requirement must fail, one line each. The real
 * map must parse and list every Level 1 and 2 requirement; whether it still holds pending rows is
 * the script's business in CI, not this test's.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `${name}` as a test file writes it in a template title. */
const slot = (name: string) => ['$', '{', name, '}'].join('');

/** A fake repository: one test file. */
const SOURCE = [
  'for (const dialect of DIALECTS) {',
  `  describe(\`login throttling (${slot('dialect')})\`, () => {`,
  "    it('accepts a password of exactly 256 characters', async () => {});",
  `    it(\`token-for-another-audience: ${slot('name')} is 401 token_invalid\`, async () => {});`,
  "    it('answers no-store, and `{}` gets a | default', async () => {});",
  '    it("keeps \'quotes\' as written", async () => {});',
  '  });',
  '}',
].join('\n');
const read = (file: string) => (file === 'test/auth/login.test.ts' ? SOURCE : null);

/** Expected requirements of the synthetic maps. */
const TWO = new Map([
  ['6.2.9', 2],
  ['7.2.1', 1],
]);

const HEAD = '| # | Level | Requirement | Verdict | Proof or reason |\n|---|---|---|---|---|\n';
const GOOD_9 =
  '| 6.2.9 | 2 | 64 characters | tested | `test/auth/login.test.ts` › it `accepts a password of exactly 256 characters` |';
const GOOD_1 = '| 7.2.1 | 1 | backend checks | not applicable | Gatehouse is the backend. |';
const check = (rows: string[], expected = TWO) => checkMap(HEAD + rows.join('\n'), { read, expected });
const kinds = (problems: Problem[]) => problems.map((p) => `${p.id ?? '-'} ${p.kind}`);

describe('scripts/check-asvs.mjs on synthetic maps', () => {
  it('a map whose every row checks out passes, and the report counts the verdicts', () => {
    const result = check([GOOD_9, GOOD_1]);
    assert.deepEqual(result.problems, []);
    assert.deepEqual(report(result), ['asvs: 2 requirements mapped: 1 tested, 1 not applicable, 0 gap']);
  });

  it('a tested row naming a test file that does not exist fails', () => {
    const result = check([
      '| 6.2.9 | 2 | 64 characters | tested | `test/auth/nope.test.ts` › it `accepts a password of exactly 256 characters` |',
      GOOD_1,
    ]);
    assert.deepEqual(kinds(result.problems), ['6.2.9 file']);
    assert.match(
      report(result)[0] ?? '',
      /^docs\/security\/asvs\.md:3: 6\.2\.9 names test\/auth\/nope\.test\.ts, which does not exist$/,
    );
  });

  it('a tested row naming a title the file does not have fails; so does the wrong kind, or no title', () => {
    const result = check([
      '| 6.2.9 | 2 | 64 characters | tested | `test/auth/login.test.ts` › it `accepts a password of exactly 257 characters` <br> `test/auth/login.test.ts` › describe `accepts a password of exactly 256 characters` <br> `test/auth/login.test.ts` |',
      GOOD_1,
    ]);
    assert.deepEqual(kinds(result.problems), ['6.2.9 title', '6.2.9 title', '6.2.9 proof']);
  });

  it('titles: exact for plain strings; the template as written or a literal part of it; escaped pipes and backticks', () => {
    const result = check([
      '| 6.2.9 | 2 | 64 characters | tested | `test/auth/login.test.ts` › describe `login throttling` <br> `test/auth/login.test.ts` › it `token-for-another-audience` <br> `test/auth/login.test.ts` › it `token-for-another-audience: ' +
        slot('name') +
        " is 401 token_invalid` <br> `test/auth/login.test.ts` › it ``answers no-store, and `{}` gets a \\| default`` <br> `test/auth/login.test.ts` › it `keeps 'quotes' as written` |",
      GOOD_1,
    ]);
    assert.deepEqual(result.problems, []);
    // A fragment of a plain title, or too short a part of a template, is no match.
    const partial = check([
      '| 6.2.9 | 2 | 64 characters | tested | `test/auth/login.test.ts` › it `accepts a password` <br> `test/auth/login.test.ts` › it `is 401` |',
      GOOD_1,
    ]);
    assert.deepEqual(kinds(partial.problems), ['6.2.9 title', '6.2.9 title']);
  });

  it('a pending row fails, and when only pending rows fail the last line says exactly that', () => {
    const result = check([
      '| 6.2.9 | 2 | 64 characters | pending | PENDING: a test of 64-character passwords |',
      GOOD_1,
    ]);
    assert.deepEqual(kinds(result.problems), ['6.2.9 pending']);
    assert.deepEqual(report(result), [
      'docs/security/asvs.md:3: 6.2.9 is pending: a test of 64-character passwords',
      'asvs: fails only for 1 pending row(s): every other row checks out; replace each PENDING with the tests that prove it',
    ]);
  });

  it('a requirement listed twice fails', () => {
    const result = check([GOOD_9, GOOD_1, GOOD_9]);
    assert.deepEqual(kinds(result.problems), ['6.2.9 duplicate']);
    assert.match(report(result)[0] ?? '', /:5: 6\.2\.9 listed again \(first on line 3\)$/);
  });

  it('no verdict, an unknown verdict, a not-applicable row without a reason and a gap without a plan fail', () => {
    const result = checkMap(
      `${HEAD}| 6.2.9 | 2 | x |  | something |\n| 7.2.1 | 1 | y | maybe | z |\n| 7.2.2 | 1 | y | not applicable | — |\n| 7.2.3 | 1 | y | gap | GAP: |`,
      {
        read,
        expected: new Map([
          ['6.2.9', 2],
          ['7.2.1', 1],
          ['7.2.2', 1],
          ['7.2.3', 1],
        ]),
      },
    );
    assert.deepEqual(kinds(result.problems), [
      '6.2.9 verdict',
      '7.2.1 verdict',
      '7.2.2 reason',
      '7.2.3 reason',
    ]);
  });

  it('a missing requirement, a wrong level, an unknown number and a row of the wrong shape fail', () => {
    const result = check([
      '| 6.2.9 | 1 | 64 characters | tested | `test/auth/login.test.ts` › it `accepts a password of exactly 256 characters` |',
      '| 6.3.5 | 3 | a Level 3 one | not applicable | not listed here |',
      '| 6.2.1 | 1 | short | tested |',
    ]);
    assert.deepEqual(kinds(result.problems), [
      '6.2.9 level',
      '6.3.5 unknown',
      '6.2.1 shape',
      '6.2.1 unknown',
      '6.2.1 proof',
      '- missing',
    ]);
    assert.match(report(result).at(-2) ?? '', /^docs\/security\/asvs\.md: 7\.2\.1 \(Level 1\) has no row$/);
  });
});

describe('docs/security/asvs.md', () => {
  const text = readFileSync(`${ROOT}docs/security/asvs.md`, 'utf8');
  const readRepo = (file: string) => {
    try {
      return readFileSync(`${ROOT}${file}`, 'utf8');
    } catch {
      return null;
    }
  };

  it('lists exactly the Level 1 and 2 requirements of V6–V10 of ASVS 5.0.0, once each, with a known verdict', () => {
    const rows = parseMap(text);
    assert.equal(EXPECTED.size, 96);
    assert.deepEqual(rows.map((r) => r.id).sort(), [...EXPECTED.keys()].sort());
    for (const row of rows) assert.ok(VERDICTS.includes(row.verdict), `${row.id}: ${row.verdict}`);
  });

  it('every test it names exists, with its title (pending rows are left to the script in CI)', () => {
    const { problems } = checkMap(text, { read: readRepo });
    assert.deepEqual(
      problems.filter((p) => p.kind !== 'pending').map((p) => `${p.line}: ${p.id} ${p.message}`),
      [],
    );
  });
});
