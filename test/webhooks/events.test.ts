import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type AuditEvent, insertUser, recordAudit } from '../../src/identity/index.ts';
import { fanOutEvents } from '../../src/modules/webhooks/fanout.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';
import { adminHeaders, createEndpoint } from './helpers.ts';

const PASSWORD = 'a long and unusual passphrase 7';

interface Emitted {
  type: string;
  data: {
    user: { id: string; email: string };
    actor: { type: string; id: string | null };
    session?: { id: string };
  };
}

for (const dialect of DIALECTS) {
  describe(`webhook events: one place, one change one event [${dialect}]`, () => {
    let t: TestApp;
    let headers: { authorization: string };
    before(async () => {
      // No worker involvement needed: the events are read from the outbox table as committed.
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      headers = await adminHeaders(t);
      await createEndpoint(t, headers, 'https://hooks.example.com/all');
    });
    after(() => t.destroy());
    beforeEach(() => t.ctx.db.deleteFrom('webhook_events').execute());

    const emitted = async (): Promise<Emitted[]> => {
      const rows = await t.ctx.db.selectFrom('webhook_events').select('payload').orderBy('id').execute();
      return rows.map((r) => JSON.parse(r.payload) as Emitted);
    };
    const types = async () => (await emitted()).map((e) => e.type);

    it('a rolled-back change emits nothing; the same change committed emits its event', async () => {
      const change = async (fail: boolean) => {
        const user = await createUser(t);
        const event: AuditEvent = {
          action: 'user.update',
          actor: { type: 'system' },
          target: { type: 'user', id: user.id },
        };
        await t.ctx.db
          .transaction()
          .execute(async (trx) => {
            await recordAudit(trx, event);
            if (fail) throw new Error('rolled back');
          })
          .catch(() => {});
      };
      await change(true);
      assert.deepEqual(await types(), []);
      await change(false);
      assert.deepEqual(await types(), ['user.updated']);
      // And a request refused after validation (email taken) writes nothing either.
      await t.ctx.db.deleteFrom('webhook_events').execute();
      const taken = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers,
        payload: { email: 'root@gatehouse.test' },
      });
      assert.equal(taken.statusCode, 409);
      assert.deepEqual(await types(), []);
    });

    it('an admin update that renames and disables emits user.disabled only; a rename emits user.updated', async () => {
      const user = await createUser(t);
      const put = (payload: Record<string, unknown>) =>
        t.app.inject({ method: 'PUT', url: `/api/v1/users/${user.id}`, headers, payload });
      assert.equal((await put({ name: 'Renamed', status: 'disabled' })).statusCode, 200);
      const [only, ...rest] = await emitted();
      assert.equal(rest.length, 0);
      assert.equal(only?.type, 'user.disabled');
      assert.equal(only?.data.user.id, user.id);
      assert.equal(only?.data.actor.type, 'admin');
      await t.ctx.db.deleteFrom('webhook_events').execute();
      assert.equal((await put({ name: 'Again' })).statusCode, 200);
      assert.deepEqual(await types(), ['user.updated']);
    });

    it('a password change emits password.changed only (not the session it opens)', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: user.email, password: PASSWORD },
      });
      assert.equal(login.statusCode, 200, login.body);
      const [created] = await emitted();
      assert.equal(created?.type, 'session.created');
      assert.equal(created?.data.actor.type, 'user');
      assert.equal(typeof created?.data.session?.id, 'string');
      // The body's user is the row as the sign-in left it (handed over by the sign-in, not re-read).
      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.ok(created);
      assert.deepEqual(created.data.user, json(login).user);
      assert.equal(
        (created.data.user as { last_login_at?: string }).last_login_at,
        new Date(Number(row.last_login_at)).toISOString(),
      );
      await t.ctx.db.deleteFrom('webhook_events').execute();
      const res = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/change-password',
        headers: { authorization: `Bearer ${json<{ access_token: string }>(login).access_token}` },
        payload: { current_password: PASSWORD, new_password: `${PASSWORD} and more` },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await types(), ['password.changed']);
    });

    it('logout emits session.revoked; deletion emits user.deleted with the user as it was', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: user.email, password: PASSWORD },
      });
      const token = json<{ access_token: string }>(login).access_token;
      await t.ctx.db.deleteFrom('webhook_events').execute();
      const out = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: { authorization: `Bearer ${token}` },
        payload: {},
      });
      assert.equal(out.statusCode, 204, out.body);
      assert.deepEqual(await types(), ['session.revoked']);
      await t.ctx.db.deleteFrom('webhook_events').execute();
      assert.equal(
        (await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${user.id}`, headers })).statusCode,
        204,
      );
      const [deleted] = await emitted();
      assert.equal(deleted?.type, 'user.deleted');
      assert.equal(deleted?.data.user.email, user.email);
    });

    it('an invitation emits invitation.created; a created user user.created (actor admin)', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users/invite',
        headers,
        payload: { email: 'invitee@example.com' },
      });
      assert.equal(res.statusCode, 201, res.body);
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers,
        payload: { email: 'made@example.com' },
      });
      assert.equal(created.statusCode, 201);
      const events = await emitted();
      assert.deepEqual(
        events.map((e) => e.type),
        ['invitation.created', 'user.created'],
      );
      assert.equal(events[1]?.data.actor.type, 'admin');
      assert.ok(events.every((e) => !JSON.stringify(e).match(/password_hash|token/)));
    });

    it('maps every audited change of §19 to its event (the one mapping every path goes through)', async () => {
      const user = await createUser(t);
      const me = { type: 'user' as const, id: user.id };
      const u = { type: 'user' as const, id: user.id };
      const cases: Array<[AuditEvent, string]> = [
        [{ action: 'user.signup', actor: { type: 'anonymous' }, target: u }, 'user.created'],
        [{ action: 'password.reset', actor: me, target: u }, 'password.reset'],
        [{ action: 'email.verify', actor: me, target: u }, 'email.verified'],
        [{ action: 'email.change', actor: me, target: u }, 'email.changed'],
        [{ action: 'mfa.totp_enable', actor: me, target: u }, 'mfa.enabled'],
        [{ action: 'mfa.totp_disable', actor: me, target: u }, 'mfa.disabled'],
        [{ action: 'mfa.reset', actor: { type: 'system' }, target: u }, 'mfa.disabled'],
        [{ action: 'passkey.add', actor: me, target: { type: 'passkey', id: 'p1' } }, 'passkey.added'],
        [{ action: 'passkey.remove', actor: me, target: { type: 'passkey', id: 'p1' } }, 'passkey.removed'],
        [
          {
            action: 'session.revoke',
            actor: me,
            target: { type: 'session', id: 's1' },
            details: { user_id: user.id },
          },
          'session.revoked',
        ],
        [
          {
            action: 'refresh.reuse',
            outcome: 'failure',
            actor: { type: 'anonymous' },
            target: { type: 'session', id: 's2' },
            details: { user_id: user.id },
          },
          'session.revoked',
        ],
        [
          {
            action: 'invitation.accept',
            actor: me,
            target: { type: 'invitation', id: 'i1' },
            details: { user_id: user.id },
          },
          'invitation.accepted',
        ],
        [{ action: 'login.failure', outcome: 'failure', actor: { type: 'anonymous' }, target: u }, ''],
        [{ action: 'email.change_request', actor: me, target: u }, ''],
      ];
      for (const [event, expected] of cases) {
        await t.ctx.db.deleteFrom('webhook_events').execute();
        await recordAudit(t.ctx.db, event);
        assert.deepEqual(await types(), expected ? [expected] : [], event.action);
      }
    });

    it('queues only for endpoints subscribed to the type, and nothing for a disabled one', async () => {
      await t.ctx.db.updateTable('webhook_endpoints').set({ enabled: 0 }).execute();
      const only = await createEndpoint(t, headers, 'https://hooks.example.com/sessions', [
        'session.created',
      ]);
      const user = await createUser(t);
      await t.ctx.db.transaction().execute(async (trx) => {
        await insertUser(trx, { ...user, id: crypto.randomUUID(), email: 'x@example.com' });
        await recordAudit(trx, {
          action: 'user.create',
          actor: { type: 'system' },
          target: { type: 'user', id: user.id },
        });
      });
      assert.deepEqual(await types(), []);
      await recordAudit(t.ctx.db, {
        action: 'login.success',
        actor: { type: 'user', id: user.id },
        target: { type: 'user', id: user.id },
        details: { session_id: 's9' },
      });
      // The change wrote one outbox row; the worker's fan-out plans the attempts (run here, at once).
      await fanOutEvents(t.ctx.db);
      const rows = await t.ctx.db.selectFrom('webhook_deliveries').select('endpoint_id').execute();
      assert.deepEqual(
        rows.map((r) => r.endpoint_id),
        [only.id],
      );
    });
  });
}
