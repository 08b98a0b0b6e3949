import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const PASSWORD = 'operations passphrase, quite long';

/** Runs `gatehouse create-admin` as its own process, in an empty directory (no stray .env). */
async function createAdmin(databaseUrl: string, email: string, password: string) {
  const cwd = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
  try {
    return await run(process.execPath, [CLI, 'create-admin', '--email', email], {
      cwd,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: databaseUrl,
        ADMIN_PASSWORD: password,
        LOG_LEVEL: 'silent',
      },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => ({
        code: err.code,
        stdout: err.stdout,
        stderr: err.stderr,
      }),
    );
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

for (const dialect of DIALECTS) {
  describe(`gatehouse create-admin [${dialect}]`, () => {
    let database: TestDatabase;
    let t: TestApp | undefined;

    before(async () => {
      database = await createTestDatabase(dialect);
    });
    after(async () => {
      if (t) await t.close();
      await database.drop();
    });

    it('refuses a password the policy refuses, in one line', async () => {
      const result = await createAdmin(database.url, 'ops@example.com', 'too short');
      assert.equal(result.code, 1);
      assert.equal(result.stderr.trim().split('\n').length, 1);
      assert.match(result.stderr, /^gatehouse: password refused: .*at least 15 characters/);
    });

    it('creates an admin on a fresh database who can then log in', async () => {
      const result = await createAdmin(database.url, ' Ops@Example.COM ', PASSWORD);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /admin .* ready \(id [0-9a-f-]{36}\)/);

      t = await buildTestApp(dialect, { database });
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: 'ops@example.com', password: PASSWORD },
      });
      assert.equal(res.statusCode, 200, res.body);
      const user = json<{ user: { role: string; status: string; email: string } }>(res).user;
      assert.deepEqual([user.email, user.role, user.status], ['ops@example.com', 'admin', 'active']);
      // An admin existed at start, so ADMIN_EMAIL of the test environment created nobody.
      const admins = await t.ctx.db.selectFrom('users').select('email').where('role', '=', 'admin').execute();
      assert.deepEqual(
        admins.map((a) => a.email),
        ['ops@example.com'],
      );
    });

    it('create-admin-reset-keeps-sessions: re-passwording an existing account ends every session it had', async () => {
      assert.ok(t, 'runs after the test above, on its app');
      const app = t;
      const login = (password: string) =>
        app.app.inject({
          method: 'POST',
          url: '/api/v1/login',
          payload: { email: 'ops@example.com', password },
        });
      const first = await login(PASSWORD);
      assert.equal(first.statusCode, 200, first.body);
      const { access_token, refresh_token } = json<{ access_token: string; refresh_token: string }>(first);

      const NEW_PASSWORD = 'the replacement operations passphrase';
      const result = await createAdmin(database.url, 'ops@example.com', NEW_PASSWORD);
      assert.equal(result.code, 0, result.stderr);

      const verify = await app.app.inject({
        url: '/api/v1/verify-token',
        headers: { authorization: `Bearer ${access_token}` },
      });
      assert.equal(verify.statusCode, 401, verify.body);
      assert.equal(json(verify).code, 'session_revoked');
      const refreshed = await app.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        payload: { refresh_token },
      });
      assert.equal(refreshed.statusCode, 401);
      assert.equal((await login(NEW_PASSWORD)).statusCode, 200);
      const entry = await app.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'password.change')
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      // Two: this test's session and the one the test above opened.
      assert.deepEqual(JSON.parse(entry.details), {
        sessions_revoked: 2,
        via: 'cli.create_admin',
        reason: 'admin_set_by_operator',
      });
    });
  });
}
