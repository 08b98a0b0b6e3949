import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenResponse } from '../../src/identity/index.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';

// docs/api.md §16: a revocation is seen by every instance within 100 ms; the command's commit
// precedes its exit, so this is the most a token may still be accepted after the command returns.
const REVOCATION_BOUND_MS = 100;

for (const dialect of DIALECTS) {
  describe(`gatehouse sessions revoke-all (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    const verify = (token: string) =>
      t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${token}` } });
    const refresh = (token: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/refresh-token', payload: { refresh_token: token } });

    /** Three users with two sessions each, and two sessions of the admin; every access token used once (cached). */
    async function population(): Promise<{
      admin: UserRow;
      users: UserRow[];
      sessions: Map<string, TokenResponse[]>;
    }> {
      const admin = await firstAdmin(t);
      const users = [await createUser(t), await createUser(t), await createUser(t)];
      const sessions = new Map<string, TokenResponse[]>();
      for (const user of [admin, ...users]) {
        const pair = [await sessionFor(t, user), await sessionFor(t, user)];
        for (const s of pair) assert.equal((await verify(s.access_token)).statusCode, 200);
        sessions.set(user.id, pair);
      }
      return { admin, users, sessions };
    }

    /* no-revoke-all: an operator could end one user's sessions but not everyone's (ASVS 5.0 7.4.5);
       now one command ends every session: each refresh token and access token then fails. */
    it('ends every session: every refresh token and every access token then fails, each session audited', async () => {
      const { sessions } = await population();
      const all = [...sessions.values()].flat();
      const before = await t.ctx.db
        .selectFrom('sessions')
        .select('id')
        .where('revoked_at', 'is', null)
        .execute();

      const run = await runCli(['sessions', 'revoke-all'], t.databaseUrl);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`^ended ${before.length} session\\(s\\) of \\d+ user\\(s\\)\\n$`));
      await sleep(REVOCATION_BOUND_MS);

      for (const s of all) {
        const access = await verify(s.access_token);
        assert.equal(access.statusCode, 401, access.body);
        assert.equal(json(access).code, 'session_revoked');
        const renewed = await refresh(s.refresh_token);
        assert.equal(renewed.statusCode, 401, renewed.body);
      }
      const live = await t.ctx.db
        .selectFrom('sessions')
        .select('id')
        .where('revoked_at', 'is', null)
        .execute();
      assert.deepEqual(live, []);

      const audited = await t.ctx.db
        .selectFrom('audit_log')
        .select(['target_id', 'actor_type', 'details'])
        .where('action', '=', 'session.revoke')
        .execute();
      const byTarget = new Map(audited.map((a) => [a.target_id, a]));
      for (const { id } of before) {
        const entry = byTarget.get(id);
        assert.ok(entry, `session ${id} audited`);
        assert.equal(entry.actor_type, 'system');
        const details = JSON.parse(entry.details) as Record<string, unknown>;
        assert.equal(details.reason, 'revoked_by_operator');
        assert.equal(details.via, 'cli.sessions_revoke_all');
      }

      // Signing in again works: the command ends sessions, not accounts.
      const again = await sessionFor(t, await firstAdmin(t));
      assert.equal((await verify(again.access_token)).statusCode, 200);
    });

    /* no-revoke-all: --except-admins keeps the admins' sessions (the console stays signed in) and
       ends everyone else's. */
    it('--except-admins keeps the sessions of admins and ends every other', async () => {
      const { admin, users, sessions } = await population();
      const run = await runCli(['sessions', 'revoke-all', '--except-admins'], t.databaseUrl);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^ended 6 session\(s\) of 3 user\(s\) \(admins kept theirs\)\n$/);
      await sleep(REVOCATION_BOUND_MS);

      for (const s of sessions.get(admin.id) ?? []) {
        assert.equal((await verify(s.access_token)).statusCode, 200);
        assert.equal((await refresh(s.refresh_token)).statusCode, 200);
      }
      for (const user of users) {
        for (const s of sessions.get(user.id) ?? []) {
          assert.equal((await verify(s.access_token)).statusCode, 401);
          assert.equal((await refresh(s.refresh_token)).statusCode, 401);
        }
      }
    });
  });
}
