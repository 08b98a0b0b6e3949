import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../src/platform/config/reader.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { runEntry } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-first-month-'));

/** The one line a start that must fail prints, and its exit code. */
async function start(databaseUrl: string) {
  const result = await runEntry(
    'src/main.ts',
    [],
    { DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent' },
    dir,
  );
  return { code: result.code, lines: result.stderr.trim().split('\n'), stdout: result.stdout };
}

function configError(env: Record<string, string>): string {
  try {
    loadConfig({ DATABASE_URL: 'sqlite::memory:', ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a configuration error');
}

describe('the first month: small defects', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('regression: a file where the SQLite directory should be said only EEXIST; now one line naming it', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    for (const url of [`sqlite:${file}/x.db`, `sqlite:${file}/deeper/x.db`]) {
      const result = await start(url);
      assert.equal(result.code, 1);
      assert.deepEqual(result.lines, [
        `gatehouse: serve failed: cannot use the SQLite file ${url.slice('sqlite:'.length)}: ${file} is not a directory (DATABASE_URL)`,
      ]);
    }
  });

  it('regression: DATABASE_URL=sqlite:/proc/nope/x.db spun at full CPU forever (recursive mkdir under /proc); now fails at once with one line', {
    skip: process.platform !== 'linux' && 'needs /proc',
  }, async () => {
    const result = await start('sqlite:/proc/nope/x.db');
    assert.equal(result.code, 1);
    assert.deepEqual(result.lines, [
      'gatehouse: serve failed: cannot use the SQLite file /proc/nope/x.db: cannot create the directory /proc/nope (ENOENT) (DATABASE_URL)',
    ]);
  });

  it('regression: gatehouse --version failed; it prints the version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-v']) {
      const result = await runEntry('src/cli.ts', [flag], {}, dir);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `gatehouse ${version}\n`);
      assert.equal(result.stderr, '');
    }
  });

  it('regression: configuration errors upper-cased the value they quoted (API_FORM=c said "C"); values are quoted as given', () => {
    assert.equal(configError({ API_FORM: 'c' }), 'API_FORM must be A, B or full, got "c"');
    assert.equal(configError({ API_FORM: 'Fuller' }), 'API_FORM must be A, B or full, got "Fuller"');
    assert.equal(
      configError({ METRICS_PUBLIC: 'Yes Please' }),
      'METRICS_PUBLIC must be true or false, got "Yes Please"',
    );
    assert.equal(
      configError({ LOG_LEVEL: 'Loud' }),
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "Loud"',
    );
  });

  it('the CLI quotes what it refuses as given, with the same cap', async () => {
    const word = `Deploy${'x'.repeat(100)}`;
    const result = await runEntry('src/cli.ts', [word], {}, dir);
    assert.equal(result.code, 2);
    assert.equal(result.stderr.split('\n')[0], `gatehouse: unknown command "${word.slice(0, 80)}…"`);
  });

  it('regression: a long value was cut without saying so; quoted up to 80 characters, then "…"', () => {
    const long = `${'x'.repeat(79)}Yz`;
    assert.equal(configError({ PORT: long }), `PORT must be a whole number, got "${'x'.repeat(79)}Y…"`);
    const exact = 'y'.repeat(80);
    assert.equal(configError({ PORT: exact }), `PORT must be a whole number, got "${exact}"`);
    // One line, whatever the value holds.
    assert.equal(configError({ PORT: 'a\nb' }), 'PORT must be a whole number, got "a\\u000ab"');
  });
});
