import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashSync as bcryptHash } from 'bcryptjs';
import { decodeJwt } from 'jose';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { assertEntry, auditEntries, clearAudit, onlyEntry, refuseInserts } from '../helpers/audit.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

const PASSWORD = 'a long and unusual passphrase 7';
const NEW_PASSWORD = 'another quite unusual passphrase 8';
const UA = 'audit-wiring/1.0';

interface Tokens {
  access_token: string;
  refresh_token: string;
}

const sid = (accessToken: string) => String(decodeJwt(accessToken).sid);

for (const dialect of DIALECTS) {
  describe(`audit wiring: auth and account [${dialect}]`, () => {
    let t: TestApp;
    const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'user-agent': UA });
    const login = (email: string, password: string, remoteAddress: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email, password },
        headers: { 'user-agent': UA },
        remoteAddress,
      });
    const refresh = (token: string, remoteAddress = '198.51.100.40') =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        payload: { refresh_token: token },
        headers: { 'user-agent': UA },
        remoteAddress,
      });
    const changePassword = (access: string, current: string, next: string) =>
      t.app.inject({
        method: 'PUT',
        url: '/api/v1/change-password',
        headers: bearer(access),
        payload: { current_password: current, new_password: next },
        remoteAddress: '198.51.100.50',
      });

    before(async () => {
      // Grace 0: every repeat of a refresh token is reuse. A small per-address budget to reach 429.
      t = await buildTestApp(dialect, {
        env: { REFRESH_REUSE_GRACE_S: '0', LOGIN_FAILURES_PER_ADDRESS_PER_MIN: '3' },
      });
    });
    after(() => t.destroy());

    it('login success: one login.success in the login transaction, naming the session it opened', async () => {
      const user = await createUser(t, { password: PASSWORD });
      await clearAudit(t);
      const res = await login(user.email, PASSWORD, '198.51.100.1');
      assert.equal(res.statusCode, 200, res.body);
      const { access_token } = json<Tokens>(res);
      const sessionId = sid(access_token);
      const session = await t.ctx.db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(session.id, sessionId);
      assertEntry(await onlyEntry(t), {
        action: 'login.success',
        outcome: 'success',
        actor_type: 'user',
        actor_id: user.id,
        target_type: 'user',
        target_id: user.id,
        ip: '198.51.100.1',
        user_agent: UA,
        // amr as in the token, as every login.success records it (mfa, passkey, password).
        details: { method: 'password', rehashed: false, amr: ['pwd'], session_id: sessionId },
      });

      // verify-token is a hot path and records nothing.
      await clearAudit(t);
      for (let i = 0; i < 3; i++) {
        const check = await t.app.inject({ url: '/api/v1/verify-token', headers: bearer(access_token) });
        assert.equal(check.statusCode, 200);
      }
      assert.equal((await auditEntries(t)).length, 0);
    });

    it('login with a legacy hash records rehashed: true', async () => {
      const user = await createUser(t);
      await t.ctx.db
        .updateTable('users')
        .set({ password_hash: bcryptHash(PASSWORD, 4) })
        .where('id', '=', user.id)
        .execute();
      await clearAudit(t);
      const res = await login(user.email, PASSWORD, '198.51.100.2');
      assert.equal(res.statusCode, 200, res.body);
      const row = await onlyEntry(t);
      assert.equal(row.action, 'login.success');
      assert.deepEqual(JSON.parse(row.details), {
        method: 'password',
        rehashed: true,
        amr: ['pwd'],
        session_id: sid(json<Tokens>(res).access_token),
      });
    });

    it('a wrong password: one login.failure, anonymous, naming the account, never the password', async () => {
      const user = await createUser(t, { password: PASSWORD });
      await clearAudit(t);
      const wrong = 'not the password at all 123';
      const res = await login(`  ${user.email.toUpperCase()} `, wrong, '198.51.100.3');
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'invalid_credentials');
      const row = await onlyEntry(t);
      assertEntry(row, {
        action: 'login.failure',
        outcome: 'failure',
        actor_type: 'anonymous',
        actor_id: null,
        target_type: 'user',
        target_id: user.id,
        ip: '198.51.100.3',
        user_agent: UA,
        details: { method: 'password', email: user.email, reason: 'invalid_credentials' },
      });
      assert.ok(!JSON.stringify(row).includes(wrong));
      // The failure was counted in the same transaction.
      const counter = await t.ctx.db
        .selectFrom('throttle_counters')
        .select('count')
        .where('key', '=', 'login:addr:198.51.100.3')
        .executeTakeFirstOrThrow();
      assert.equal(Number(counter.count), 1);
    });

    it('an unknown email: one login.failure without a target', async () => {
      await clearAudit(t);
      const res = await login('nobody-here@example.com', PASSWORD, '198.51.100.4');
      assert.equal(res.statusCode, 401);
      assertEntry(await onlyEntry(t), {
        action: 'login.failure',
        outcome: 'failure',
        actor_type: 'anonymous',
        actor_id: null,
        target_type: null,
        target_id: null,
        ip: '198.51.100.4',
        user_agent: UA,
        details: { method: 'password', email: 'nobody-here@example.com', reason: 'invalid_credentials' },
      });
    });

    it('password-typed-in-email-field-reaches-audit: a malformed e-mail is not stored in login.failure', async () => {
      await clearAudit(t);
      const typed = 'MyS3cret passphrase typed in the wrong field';
      const res = await login(typed, PASSWORD, '198.51.100.9');
      assert.equal(res.statusCode, 401);
      const row = await onlyEntry(t);
      assertEntry(row, {
        action: 'login.failure',
        outcome: 'failure',
        actor_type: 'anonymous',
        actor_id: null,
        target_type: null,
        target_id: null,
        ip: '198.51.100.9',
        user_agent: UA,
        details: { method: 'password', reason: 'invalid_credentials' },
      });
      assert.ok(!JSON.stringify(row).toLowerCase().includes('s3cret'));
    });

    it('a disabled account with the right password: one login.failure, reason account_disabled', async () => {
      const user = await createUser(t, { password: PASSWORD, status: 'disabled' });
      await clearAudit(t);
      const res = await login(user.email, PASSWORD, '198.51.100.5');
      assert.equal(res.statusCode, 403);
      assert.equal(json(res).code, 'account_disabled');
      assertEntry(await onlyEntry(t), {
        action: 'login.failure',
        outcome: 'failure',
        actor_type: 'anonymous',
        actor_id: null,
        target_type: 'user',
        target_id: user.id,
        ip: '198.51.100.5',
        user_agent: UA,
        details: { method: 'password', email: user.email, reason: 'account_disabled' },
      });
    });

    it('a throttled login leaves no entry (three failures leave three)', async () => {
      const user = await createUser(t, { password: PASSWORD });
      await clearAudit(t);
      for (let i = 0; i < 3; i++) {
        assert.equal((await login(user.email, `wrong password number ${i}`, '198.51.100.6')).statusCode, 401);
      }
      assert.equal((await auditEntries(t)).length, 3);
      await clearAudit(t);
      const throttled = await login(user.email, PASSWORD, '198.51.100.6');
      assert.equal(throttled.statusCode, 429);
      assert.equal((await auditEntries(t)).length, 0);
    });

    it('a schema refusal (400) leaves no entry', async () => {
      await clearAudit(t);
      const res = await login('someone@example.com', '', '198.51.100.7');
      assert.equal(res.statusCode, 400);
      assert.equal((await auditEntries(t)).length, 0);
    });

    it('logout: one entry naming the session; global counts the sessions it ended', async () => {
      const user = await createUser(t);
      const one = await sessionFor(t, user);
      await clearAudit(t);
      const local = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: bearer(one.access_token),
        remoteAddress: '198.51.100.8',
      });
      assert.equal(local.statusCode, 204);
      assertEntry(await onlyEntry(t), {
        action: 'logout',
        outcome: 'success',
        actor_type: 'user',
        actor_id: user.id,
        target_type: 'session',
        target_id: sid(one.access_token),
        ip: '198.51.100.8',
        user_agent: UA,
        details: { scope: 'local' },
      });

      const two = await sessionFor(t, user);
      await sessionFor(t, user);
      await clearAudit(t);
      const global = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: bearer(two.access_token),
        payload: { scope: 'global' },
        remoteAddress: '198.51.100.8',
      });
      assert.equal(global.statusCode, 204);
      assertEntry(await onlyEntry(t), {
        action: 'logout',
        outcome: 'success',
        actor_type: 'user',
        actor_id: user.id,
        target_type: 'session',
        target_id: sid(two.access_token),
        ip: '198.51.100.8',
        user_agent: UA,
        details: { scope: 'global', sessions_revoked: 2 },
      });
    });

    it('refresh: a rotation records nothing; reuse leaves one refresh.reuse, committed with the revocation', async () => {
      const user = await createUser(t);
      const first = await sessionFor(t, user);
      await clearAudit(t);
      const next = await refresh(first.refresh_token);
      assert.equal(next.statusCode, 200);
      assert.equal((await auditEntries(t)).length, 0);

      const replay = await refresh(first.refresh_token, '203.0.113.9');
      assert.equal(replay.statusCode, 401);
      assert.equal(json(replay).code, 'refresh_token_reused');
      const sessionId = sid(first.access_token);
      assertEntry(await onlyEntry(t), {
        action: 'refresh.reuse',
        outcome: 'failure',
        actor_type: 'anonymous',
        actor_id: null,
        target_type: 'session',
        target_id: sessionId,
        ip: '203.0.113.9',
        user_agent: UA,
        details: { user_id: user.id },
      });
      const session = await t.ctx.db
        .selectFrom('sessions')
        .select(['revoked_at', 'revoked_reason'])
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      assert.notEqual(session.revoked_at, null);
      assert.equal(session.revoked_reason, 'refresh_token_reused');

      // Presenting it once more: the session is already revoked, so it is merely invalid.
      await clearAudit(t);
      assert.equal(json(await refresh(first.refresh_token)).code, 'refresh_token_invalid');
      assert.equal((await auditEntries(t)).length, 0);
    });

    it('change-password: one password.change with the sessions it revoked; refusals leave none', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const caller = await sessionFor(t, user);
      await sessionFor(t, user);
      await clearAudit(t);

      assert.equal((await changePassword(caller.access_token, PASSWORD, 'short')).statusCode, 422);
      const wrong = await changePassword(caller.access_token, 'not my password 1234', NEW_PASSWORD);
      assert.equal(wrong.statusCode, 401);
      assert.equal((await auditEntries(t)).length, 0);

      const res = await changePassword(caller.access_token, PASSWORD, NEW_PASSWORD);
      assert.equal(res.statusCode, 200, res.body);
      const row = await onlyEntry(t);
      assertEntry(row, {
        action: 'password.change',
        outcome: 'success',
        actor_type: 'user',
        actor_id: user.id,
        target_type: 'user',
        target_id: user.id,
        ip: '198.51.100.50',
        user_agent: UA,
        details: { sessions_revoked: 2 },
      });
      assert.ok(!JSON.stringify(row).includes(NEW_PASSWORD) && !JSON.stringify(row).includes(PASSWORD));
    });

    it('a change-password transaction that fails after its audit insert leaves no entry and no change', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const caller = await sessionFor(t, user);
      const before = await t.ctx.db
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      // The new session is opened after the entry is written: refusing it fails the transaction there.
      const undo = await refuseInserts(t, 'sessions', 'user_id', user.id);
      try {
        await clearAudit(t);
        const res = await changePassword(caller.access_token, PASSWORD, NEW_PASSWORD);
        assert.equal(res.statusCode, 500);
        assert.equal((await auditEntries(t)).length, 0);
      } finally {
        await undo();
      }
      const afterwards = await t.ctx.db
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(afterwards.password_hash, before.password_hash);
      const check = await t.app.inject({ url: '/api/v1/verify-token', headers: bearer(caller.access_token) });
      assert.equal(check.statusCode, 200, 'the old sessions were not revoked');
    });

    it('a login whose audit entry cannot be written opens no session', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const undo = await refuseInserts(t, 'audit_log', 'target_id', user.id);
      try {
        await clearAudit(t);
        const res = await login(user.email, PASSWORD, '198.51.100.9');
        assert.equal(res.statusCode, 500);
      } finally {
        await undo();
      }
      assert.equal((await auditEntries(t)).length, 0);
      const sessions = await t.ctx.db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .execute();
      assert.equal(sessions.length, 0);
      const row = await t.ctx.db
        .selectFrom('users')
        .select('last_login_at')
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.last_login_at, null);
    });
  });
}
