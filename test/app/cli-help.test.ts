import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { COMMANDS } from '../../src/cli/commands.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

const PASSWORD = 'operations passphrase, quite long';

/** Every row of every table, sorted: what "nothing changed" is compared on. */
async function snapshot(url: string): Promise<Record<string, string[]>> {
  const database = openDatabase(url, { poolMax: 1 });
  try {
    const out: Record<string, string[]> = {};
    for (const table of await database.db.introspection.getTables()) {
      const rows = await database.db
        .selectFrom(table.name as never)
        .selectAll()
        .execute();
      out[table.name] = rows.map((r) => JSON.stringify(r)).sort();
    }
    return out;
  } finally {
    await database.close();
  }
}

/** --help at the end and -h before an unknown option (help wins, still nothing changes). */
function helpRuns(name: string, url: string, fresh: string): string[][] {
  const words = name.split(' ');
  return url === fresh ? [[...words, '--no-such-option', '-h']] : [[...words, '--help']];
}

for (const dialect of DIALECTS) {
  describe(`gatehouse --help and unknown options change nothing [${dialect}]`, () => {
    let fresh: TestDatabase;
    let used: TestDatabase;
    before(async () => {
      fresh = await createTestDatabase(dialect);
      used = await createTestDatabase(dialect);
      const admin = await runCli(['create-admin', '--email', 'ops@example.com'], used.url, {
        ADMIN_PASSWORD: PASSWORD,
      });
      assert.equal(admin.code, 0, admin.stderr);
    });
    after(async () => {
      await fresh.drop();
      await used.drop();
    });

    it('lists every command, and the ones that write are among them', () => {
      const names = COMMANDS.map((c) => c.name);
      for (const name of [
        'serve',
        'migrate',
        'create-admin',
        'rotate-keys',
        'users import',
        'users export',
      ]) {
        assert.ok(names.includes(name), name);
      }
    });

    // Regression: `gatehouse rotate-keys --help` rotated the signing key and `migrate --help`
    // migrated: --help must never act. Every command, present and future, is run here.
    for (const command of COMMANDS) {
      it(`${command.name}: --help prints its help and exits 0; an unknown option exits 2; the database is untouched`, async () => {
        const before = await snapshot(used.url);
        for (const url of [fresh.url, used.url]) {
          const runs = helpRuns(command.name, url, fresh.url);
          const results = await Promise.all(
            runs.map((args) => runCli(args, url, { ADMIN_PASSWORD: PASSWORD })),
          );
          for (const [i, run] of results.entries()) {
            const args = runs[i] ?? [];
            assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
            assert.match(run.stdout, new RegExp(`^Usage: gatehouse ${command.name}\\b`), args.join(' '));
            assert.match(run.stdout, /--help/);
          }
          // Even with every argument it needs, an unknown option stops it before anything opens.
          const required = Object.entries(command.options ?? {})
            .filter(([, o]) => o.required)
            .flatMap(([name]) => [`--${name}`, 'ops@example.com']);
          const positionals = (command.positionals ?? []).filter((p) => p.required).map(() => '-');
          const args = [...command.name.split(' '), ...required, ...positionals, '--no-such-option'];
          const bad = await runCli(args, url, { ADMIN_PASSWORD: PASSWORD });
          assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
          assert.match(bad.stderr, /Unknown option '--no-such-option'/);
          assert.match(bad.stderr, new RegExp(`usage: gatehouse ${command.name}`));
          assert.equal(bad.stdout, '');
        }
        assert.deepEqual(await snapshot(used.url), before, 'the used database is unchanged');
        assert.deepEqual(await snapshot(fresh.url), {}, 'the fresh database got no table');
      });
    }

    it('gatehouse --help, -h, help, and a group without a command', async () => {
      for (const args of [
        ['--help'],
        ['help', 'users', 'import'],
        ['--help', 'rotate-keys'],
        ['users', '-h'],
      ]) {
        const run = await runCli(args, fresh.url);
        assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
        assert.match(run.stdout, /^Usage: gatehouse /);
        assert.match(run.stdout, /users import/);
      }
      for (const args of [['frobnicate'], ['users', 'frobnicate'], ['--no-such-option']]) {
        const run = await runCli(args, fresh.url);
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
        assert.match(run.stderr, /^gatehouse: /);
      }
      assert.deepEqual(await snapshot(fresh.url), {});
    });

    it('-- ends the options: a --help after it is an argument, not a request for help', async () => {
      const run = await runCli(['users', 'export', '--', '--help'], fresh.url);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /users export takes no arguments/);
      assert.deepEqual(await snapshot(fresh.url), {});
    });
  });
}
