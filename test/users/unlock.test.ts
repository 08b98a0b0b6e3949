import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ACCOUNT_FAILURE_LIMIT } from '../../src/identity/budgets/throttle.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

// Issue 20.6: a locked-out account could only be cleared with SQL. An admin now unlocks it over
// the API (recovery module) or with `gatehouse users unlock --email E`.
const PASSWORD = 'a long and unusual passphrase 7';
const WRONG = 'not the passphrase at all, sorry';

for (const dialect of DIALECTS) {
  describe(`unlocking a locked-out account [${dialect}]`, () => {
    let t: TestApp;
    const login = (email: string, password: string, remoteAddress: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/login', payload: { email, password }, remoteAddress });

    /** Locks the account out from two addresses; both then answer 429 even to the right password. */
    async function lockOut(email: string, addresses: string[]) {
      for (const address of addresses) {
        for (let i = 0; i < ACCOUNT_FAILURE_LIMIT; i++)
          assert.equal((await login(email, WRONG, address)).statusCode, 401);
        assert.equal((await login(email, PASSWORD, address)).statusCode, 429);
      }
    }

    before(async () => {
      t = await buildTestApp(dialect, {
        env: { API_FORM: 'full', LOGIN_FAILURES_PER_ADDRESS_PER_MIN: '1000' },
      });
    });
    after(() => t.destroy());

    it('locked-out-account-needs-sql: POST /users/<id>/unlock (admin) clears the counts from every address', async () => {
      const user = await createUser(t, { password: PASSWORD });
      await lockOut(user.email, ['10.20.6.1', '10.20.6.2']);
      const admin = await authHeaders(t, await firstAdmin(t));
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/users/${user.id}/unlock`,
        headers: admin,
        remoteAddress: '10.20.6.9',
      });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal((await login(user.email, PASSWORD, '10.20.6.1')).statusCode, 200);
      assert.equal((await login(user.email, PASSWORD, '10.20.6.2')).statusCode, 200);
      const entry = await t.ctx.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'user.unlock')
        .where('target_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(entry.actor_id, (await firstAdmin(t)).id);
      assert.deepEqual(JSON.parse(entry.details), { counters_cleared: 2 });
    });

    it('unlocks only that account, and only admins may', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const other = await createUser(t, { password: PASSWORD });
      await lockOut(user.email, ['10.20.7.1']);
      await lockOut(other.email, ['10.20.7.1']);
      const url = `/api/v1/users/${user.id}/unlock`;
      const self = await t.app.inject({ method: 'POST', url, headers: await authHeaders(t, user) });
      assert.equal(self.statusCode, 403);
      assert.equal(json(self).code, 'forbidden');
      assert.equal((await t.app.inject({ method: 'POST', url })).statusCode, 401);
      const admin = await authHeaders(t, await firstAdmin(t));
      const missing = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users/0193aaaa-0000-7000-8000-000000000000/unlock',
        headers: admin,
      });
      assert.equal(missing.statusCode, 404);
      assert.equal(json(missing).code, 'not_found');
      const extra = await t.app.inject({ method: 'POST', url, headers: admin, payload: { force: true } });
      assert.equal(extra.statusCode, 400);
      assert.equal(
        (await login(user.email, PASSWORD, '10.20.7.1')).statusCode,
        429,
        'nothing unlocked so far',
      );
      assert.equal(
        (await t.app.inject({ method: 'POST', url, headers: admin, payload: {} })).statusCode,
        204,
      );
      assert.equal((await login(user.email, PASSWORD, '10.20.7.1')).statusCode, 200);
      assert.equal(
        (await login(other.email, PASSWORD, '10.20.7.1')).statusCode,
        429,
        'the other stays locked',
      );
    });

    it('locked-out-account-needs-sql: `gatehouse users unlock --email E` clears the counts', async () => {
      const user = await createUser(t, { password: PASSWORD });
      await lockOut(user.email, ['10.20.8.1']);
      const result = await runCli(['users', 'unlock', '--email', user.email.toUpperCase()], t.databaseUrl);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /unlocked .* \(1 failed-login counter/);
      assert.equal((await login(user.email, PASSWORD, '10.20.8.1')).statusCode, 200);
      const unknown = await runCli(['users', 'unlock', '--email', 'nobody@example.com'], t.databaseUrl);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /^gatehouse: no user with the e-mail nobody@example.com\n$/);
    });

    it('is part of the recovery module: forms A and B neither list nor serve it', async () => {
      const user = await createUser(t, { password: PASSWORD });
      for (const form of ['A', 'B']) {
        const other = await t.restart({ API_FORM: form });
        try {
          const index = json<{ documentation: Record<string, Record<string, string>> }>(
            await other.app.inject({ method: 'GET', url: '/' }),
          );
          assert.equal(index.documentation.users?.unlock, undefined);
          const res = await other.app.inject({
            method: 'POST',
            url: `/api/v1/users/${user.id}/unlock`,
            headers: await authHeaders(other, await firstAdmin(other)),
          });
          assert.equal(res.statusCode, 404);
          assert.equal(json(res).code, 'module_disabled');
        } finally {
          await other.close();
        }
      }
      const full = json<{ documentation: Record<string, Record<string, string>> }>(
        await t.app.inject({ method: 'GET', url: '/' }),
      );
      assert.equal(full.documentation.users?.unlock, 'POST /api/v1/users/<id>/unlock');
    });
  });
}
