// The docs say what the code does: each check reads a docs file and compares it with the code
// (or with what the code prints), so a change to one without the other fails here.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { APP_NAME_MAX_LENGTH, loadConfig } from '../../src/platform/config.ts';
import { runEntry } from '../helpers/cli.ts';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
const docs = [
  'README.md',
  ...['api', 'configuration', 'deployment', 'containers', 'email', 'pages', 'mfa'].map((d) => `docs/${d}.md`),
];

/** The one line of a fenced block of docs/configuration.md that starts with `prefix`. */
function documentedLine(prefix: string): string {
  const line = read('docs/configuration.md')
    .split('\n')
    .find((l) => l.startsWith(prefix));
  assert.ok(line, `docs/configuration.md shows a line starting ${prefix}`);
  return line;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    }),
  );
}

describe('the docs match the code', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-docs-'));
  const servers: Server[] = [];
  after(() => {
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('API_FORM: the values docs/configuration.md and the README name are the ones the code accepts', () => {
    const row = read('docs/configuration.md')
      .split('\n')
      .find((l) => l.startsWith('| `API_FORM` |'));
    assert.ok(row);
    const accepted = row.split('|')[3] ?? '';
    assert.equal(accepted.trim(), '`A`, `B` or `full` (any case)');
    for (const form of ['A', 'B', 'full', 'a', 'FULL']) {
      assert.doesNotThrow(() => loadConfig({ DATABASE_URL: 'sqlite::memory:', API_FORM: form }), form);
    }
    assert.throws(() => loadConfig({ DATABASE_URL: 'sqlite::memory:', API_FORM: 'C' }));
    assert.match(read('README.md'), /\| `API_FORM` \| `A` \| `A`, `B` or `full`:/);
  });

  it(`APP_NAME: every doc states the limit the code enforces (${APP_NAME_MAX_LENGTH}), none another`, () => {
    const env = { DATABASE_URL: 'sqlite::memory:' };
    assert.doesNotThrow(() => loadConfig({ ...env, APP_NAME: 'n'.repeat(APP_NAME_MAX_LENGTH) }));
    assert.throws(() => loadConfig({ ...env, APP_NAME: 'n'.repeat(APP_NAME_MAX_LENGTH + 1) }), /APP_NAME/);
    let stated = 0;
    for (const file of docs) {
      for (const line of read(file).split('\n')) {
        if (!line.includes('`APP_NAME`') || !/characters/.test(line)) continue;
        const limits = [...line.matchAll(/(?:≤|at most) (\d+) characters/g)].map((m) => Number(m[1]));
        assert.deepEqual(limits, [APP_NAME_MAX_LENGTH], `${file}: ${line}`);
        stated++;
      }
    }
    assert.ok(stated >= 2, 'docs/configuration.md and docs/email.md state the limit');
  });

  it('start failures: docs/configuration.md shows the lines the service prints', async () => {
    // A port taken by another process.
    const taken = createServer();
    servers.push(taken);
    const port = await listen(taken);
    const busy = await runEntry(
      'src/main.ts',
      [],
      { DATABASE_URL: `sqlite:${join(dir, 'busy.db')}`, PORT: String(port), LOG_LEVEL: 'silent' },
      dir,
    );
    assert.equal(busy.code, 1);
    assert.equal(busy.stderr, `${documentedLine('gatehouse: port ').replaceAll('3000', String(port))}\n`);

    // A PostgreSQL server that refuses: a port nobody listens on (taken, then freed).
    const probe = createServer();
    const closed = await listen(probe);
    await new Promise((r) => probe.close(r));
    const refused = await runEntry(
      'src/main.ts',
      [],
      {
        DATABASE_URL: `postgres://gatehouse:secret@127.0.0.1:${closed}/gatehouse`,
        PUBLIC_URL: 'http://localhost:3000',
        PORT: '0',
        LOG_LEVEL: 'silent',
      },
      dir,
    );
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      `${documentedLine('gatehouse: serve failed: cannot reach').replaceAll('5432', String(closed))}\n`,
    );

    // A file where the SQLite file's directory should be.
    const file = join(dir, 'in-the-way');
    writeFileSync(file, '');
    const sqlite = await runEntry(
      'src/main.ts',
      [],
      { DATABASE_URL: `sqlite:${file}/data.db`, PORT: '0', LOG_LEVEL: 'silent' },
      dir,
    );
    assert.equal(sqlite.code, 1);
    assert.equal(
      sqlite.stderr,
      `${documentedLine('gatehouse: serve failed: cannot use the SQLite').replaceAll('/srv/gatehouse', file)}\n`,
    );
  });

  it("docs/deployment.md's connection arithmetic adds up, with the code's defaults", () => {
    const text = read('docs/deployment.md').replace(/\s+/g, ' ');
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:' });
    assert.match(text, /plus \*\*two\*\* LISTEN connections/);
    const sums = [...text.matchAll(/(\d+) instances × \((\d+) \+ (\d+)\) = (\d+), plus (\d+) for the CLI/g)];
    assert.equal(sums.length, 2);
    const usable = 100 - 3;
    assert.match(text, /`max_connections = 100`, 3 reserved: 97 usable/);
    for (const [, n, pool, listeners, total, cli] of sums) {
      assert.equal(Number(pool), config.databasePoolMax, 'the default DATABASE_POOL_MAX');
      assert.equal(Number(listeners), 2, 'two LISTEN connections per instance');
      assert.equal(Number(n) * (Number(pool) + Number(listeners)), Number(total));
      const used = Number(total) + Number(cli);
      const verdict = used > usable ? 'over the limit' : 'plenty of headroom';
      const after = text.slice(text.indexOf(`${n} instances ×`), text.indexOf(`${n} instances ×`) + 120);
      assert.ok(after.includes(verdict), `${n} instances: ${used} of ${usable} is ${verdict}: ${after}`);
    }
  });

  it('no stale "being built" or "skipped until merged" sentences in the docs or the tests', async () => {
    const { readdirSync } = await import('node:fs');
    const files = [
      ...docs,
      ...readdirSync(new URL('docs/', ROOT)).map((f) => `docs/${f}`),
      ...readdirSync(new URL('test/', ROOT), { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.ts') && !f.endsWith('docs-match-code.test.ts'))
        .map((f) => `test/${f}`),
    ];
    for (const file of files) {
      if (!file.endsWith('.md') && !file.endsWith('.ts')) continue;
      const text = read(file);
      assert.doesNotMatch(text, /being built/, file);
      assert.doesNotMatch(text, /until (it is |they are )?merged/, file);
    }
  });

  it('the Docker build context: what the Dockerfile copies is not ignored, and docs/containers.md names exactly that', () => {
    const copied = read('Dockerfile')
      .split('\n')
      .filter((l) => /^COPY /.test(l) && !l.includes('--from='))
      .flatMap((l) =>
        l
          .replace(/^COPY /, '')
          .trim()
          .split(/\s+/)
          .slice(0, -1),
      );
    assert.deepEqual(
      new Set(copied),
      new Set([
        'package.json',
        'package-lock.json',
        'tsconfig.json',
        'tsconfig.build.json',
        'src',
        'web',
        // The message catalogs (docs/languages.md), read at start like web/.
        'locales',
        'assets',
      ]),
    );
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const source of copied) {
      assert.ok(
        !ignored.includes(source) && !ignored.includes(`${source}/`),
        `${source} is in the build context`,
      );
    }
    const containers = read('docs/containers.md').replace(/\s+/g, ' ');
    assert.match(
      containers,
      /keeps the build context to `package\*\.json`, `tsconfig\*\.json`, `src\/`, `web\/`, `locales\/` and `assets\/`/,
    );
    // compose.yaml builds from this directory, with this Dockerfile.
    assert.match(read('compose.yaml'), /^ {4}build: \.$/m);
  });
});

describe('install hygiene', () => {
  it("the README walk-through's token files are git-ignored", async () => {
    const { execFileSync } = await import('node:child_process');
    const walkthrough =
      read('README.md').split('walkthrough:begin')[1]?.split('<!-- walkthrough:end -->')[0] ?? '';
    const files = [...new Set([...walkthrough.matchAll(/> ([\w.-]+\.json)/g)].map((m) => m[1] ?? ''))];
    assert.deepEqual(files, ['login.json', 'refreshed.json']);
    const root = new URL('.', ROOT).pathname;
    // git check-ignore prints each ignored path, and exits 1 when none is.
    const ignored = execFileSync('git', ['check-ignore', '--no-index', ...files], {
      cwd: root,
      encoding: 'utf8',
    });
    assert.deepEqual(ignored.trim().split('\n'), files);
  });

  it('the committed lock is what npm writes: every package with an install script says so', () => {
    // npm records hasInstallScript for better-sqlite3 (its binding.gyp) when it installs it; a lock
    // without it was rewritten by the first `npm install` of a fresh clone.
    const lock = JSON.parse(read('package-lock.json')) as {
      lockfileVersion: number;
      packages: Record<string, { hasInstallScript?: boolean; optional?: boolean }>;
    };
    assert.equal(lock.lockfileVersion, 3);
    assert.equal(lock.packages['node_modules/better-sqlite3']?.hasInstallScript, true);
    assert.equal(lock.packages['node_modules/node']?.hasInstallScript, true);
    assert.equal(lock.packages['node_modules/node']?.optional, true);
    const pkg = JSON.parse(read('package.json')) as {
      allowScripts: Record<string, boolean>;
      optionalDependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    // npm 11.16+ asks for install scripts to be approved (npm 12 skips the others): `node` fetches
    // its binary in one, and without it there is no Node 24 for an old system Node.
    assert.deepEqual(pkg.allowScripts, { 'better-sqlite3': true, node: true });
    assert.match(pkg.optionalDependencies.node ?? '', /^\^24\./);
    assert.equal(pkg.scripts.postinstall, 'node scripts/node-runtime.mjs');
  });
});
