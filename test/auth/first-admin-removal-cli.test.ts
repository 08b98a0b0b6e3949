import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

const PASSWORD = 'operations passphrase, quite long';
// No ADMIN_EMAIL: the first start creates admin@example.com with a generated password (docs/api.md §10).
const NO_ADMIN_ENV = { ADMIN_EMAIL: '', ADMIN_PASSWORD: '', LOG_LEVEL: 'warn' };

/** Starts and stops the service once on the database; returns the password it printed, if any. */
async function firstStart(dialect: (typeof DIALECTS)[number], database: TestDatabase) {
  const lines: string[] = [];
  const t = await buildTestApp(dialect, { database, env: NO_ADMIN_ENV, logLines: lines });
  const line = lines
    .map((l) => JSON.parse(l) as { generated_password?: string })
    .find((l) => l.generated_password);
  return { t, password: line?.generated_password };
}

async function emails(database: TestDatabase, dialect: (typeof DIALECTS)[number]): Promise<string[]> {
  const t = await buildTestApp(dialect, { database, env: NO_ADMIN_ENV });
  try {
    const rows = await t.ctx.db.selectFrom('users').select('email').orderBy('email').execute();
    return rows.map((r) => r.email);
  } finally {
    await t.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`create-admin and the generated first admin [${dialect}]`, () => {
    let databases: TestDatabase[] = [];
    const fresh = async () => {
      const database = await createTestDatabase(dialect);
      databases.push(database);
      return database;
    };
    before(() => {
      databases = [];
    });
    after(async () => {
      for (const database of databases) await database.drop();
    });

    it('regression: the generated admin@example.com lingered after create-admin made the real admin; now removed when it never signed in, and the command says so', async () => {
      const database = await fresh();
      const { t, password } = await firstStart(dialect, database);
      assert.ok(password, 'the first start printed a generated password');
      await t.close();

      const result = await runCli(['create-admin', '--email', 'ops@example.com'], database.url, {
        ADMIN_PASSWORD: PASSWORD,
      });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^admin ops@example\.com ready \(id [0-9a-f-]{36}\)$/m);
      assert.match(
        result.stdout,
        /^removed admin@example\.com, the admin created at first start: it never signed in$/m,
      );
      assert.deepEqual(await emails(database, dialect), ['ops@example.com']);

      const again = await buildTestApp(dialect, { database, env: NO_ADMIN_ENV });
      try {
        const login = await again.app.inject({
          method: 'POST',
          url: '/api/v1/login',
          payload: { email: 'admin@example.com', password },
        });
        assert.equal(login.statusCode, 401, 'the printed password opens nothing any more');
        const entry = await again.ctx.db
          .selectFrom('audit_log')
          .select('details')
          .where('action', '=', 'user.delete')
          .executeTakeFirstOrThrow();
        assert.deepEqual(JSON.parse(entry.details), {
          email: 'admin@example.com',
          role: 'admin',
          via: 'cli.create_admin',
          reason: 'first_admin_never_used',
        });
      } finally {
        await again.close();
      }
    });

    it('keeps the generated admin once it has signed in', async () => {
      const database = await fresh();
      const { t, password } = await firstStart(dialect, database);
      // Its first sign-in replaces the generated password (docs/auth.md, "First admin").
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: 'admin@example.com', password, new_password: PASSWORD },
      });
      assert.equal(login.statusCode, 200, login.body);
      assert.equal(json<{ user: { role: string } }>(login).user.role, 'admin');
      await t.close();

      const result = await runCli(['create-admin', '--email', 'ops@example.com'], database.url, {
        ADMIN_PASSWORD: PASSWORD,
      });
      assert.equal(result.code, 0, result.stderr);
      assert.doesNotMatch(result.stdout, /removed/);
      assert.deepEqual(await emails(database, dialect), ['admin@example.com', 'ops@example.com']);
    });

    it('keeps admin@example.com when create-admin names it (the README walk-through), or once its password was set', async () => {
      const database = await fresh();
      const { t } = await firstStart(dialect, database);
      await t.close();
      const same = await runCli(['create-admin', '--email', 'Admin@Example.com'], database.url, {
        ADMIN_PASSWORD: PASSWORD,
      });
      assert.equal(same.code, 0, same.stderr);
      assert.doesNotMatch(same.stdout, /removed/);
      // Its password is now the operator's (a password.change entry): no longer the generated one.
      const other = await runCli(['create-admin', '--email', 'ops@example.com'], database.url, {
        ADMIN_PASSWORD: PASSWORD,
      });
      assert.equal(other.code, 0, other.stderr);
      assert.doesNotMatch(other.stdout, /removed/);
      assert.deepEqual(await emails(database, dialect), ['admin@example.com', 'ops@example.com']);
    });
  });
}
