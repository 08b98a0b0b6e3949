import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOrPromoteAdmin } from '../../src/modules/auth/first-admin.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { assertEntry, auditEntries, clearAudit, onlyEntry, refuseInserts } from '../helpers/audit.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';

const PASSWORD = 'a long and unusual passphrase 7';
const UA = 'audit-wiring-users/1.0';

for (const dialect of DIALECTS) {
  describe(`audit wiring: users and user_admin [${dialect}]`, () => {
    let t: TestApp;
    let admin: UserRow;
    let adminToken: string;

    const send = (
      method: 'POST' | 'PUT' | 'DELETE',
      url: string,
      token: string,
      remoteAddress: string,
      payload?: Record<string, unknown>,
    ) =>
      t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token}`, 'user-agent': UA },
        remoteAddress,
        ...(payload ? { payload } : {}),
      });
    const put = (id: string, payload: Record<string, unknown>, ip: string, token = adminToken) =>
      send('PUT', `/api/v1/users/${id}`, token, ip, payload);
    const byAdmin = (ip: string) => ({
      outcome: 'success' as const,
      actor_type: 'user' as const,
      actor_id: admin.id,
      ip,
      user_agent: UA,
    });
    const userRow = (id: string) =>
      t.ctx.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    const liveSessions = async (userId: string) =>
      (
        await t.ctx.db
          .selectFrom('sessions')
          .select('id')
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .execute()
      ).length;

    before(async () => {
      t = await buildTestApp(dialect);
      admin = await firstAdmin(t);
      adminToken = (await sessionFor(t, admin)).access_token;
    });
    after(() => t.destroy());

    it('the first admin at start: one user.create by the system, via bootstrap', async () => {
      assertEntry(await onlyEntry(t), {
        action: 'user.create',
        outcome: 'success',
        actor_type: 'system',
        actor_id: null,
        target_type: 'user',
        target_id: admin.id,
        ip: null,
        user_agent: null,
        details: { role: 'admin', via: 'bootstrap' },
      });
    });

    it('create-admin promoting a disabled user: role_change, status_change, password.change by the system', async () => {
      const user = await createUser(t, { status: 'disabled' });
      await clearAudit(t);
      const id = await createOrPromoteAdmin(t.ctx, user.email, PASSWORD, 'cli.create_admin');
      assert.equal(id, user.id);
      const rows = await auditEntries(t);
      const system = {
        outcome: 'success' as const,
        actor_type: 'system' as const,
        actor_id: null,
        target_type: 'user',
        target_id: user.id,
        ip: null,
        user_agent: null,
      };
      assert.equal(rows.length, 3);
      assertEntry(rows[0], {
        action: 'user.role_change',
        ...system,
        details: { from: 'user', to: 'admin', via: 'cli.create_admin' },
      });
      assertEntry(rows[1], {
        action: 'user.status_change',
        ...system,
        details: { from: 'disabled', to: 'active', sessions_revoked: 0, via: 'cli.create_admin' },
      });
      assertEntry(rows[2], {
        action: 'password.change',
        ...system,
        // A password the system set says why (docs/operations.md).
        details: { sessions_revoked: 0, via: 'cli.create_admin', reason: 'admin_set_by_operator' },
      });
      // Back to a plain disabled user, so the first admin is again the only active admin.
      await t.ctx.db
        .updateTable('users')
        .set({ role: 'user', status: 'disabled' })
        .where('id', '=', user.id)
        .execute();
    });

    it('a refused demotion of the last admin (409 last_admin) writes nothing', async () => {
      await clearAudit(t);
      const res = await put(admin.id, { role: 'user' }, '198.51.100.1');
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(json(res).code, 'last_admin');
      assert.equal((await auditEntries(t)).length, 0);
      assert.equal((await userRow(admin.id))?.role, 'admin');
    });

    it('POST /users: one user.create by the admin, via api, with the role', async () => {
      await clearAudit(t);
      const res = await send('POST', '/api/v1/users', adminToken, '198.51.100.2', {
        email: 'Created@Example.com',
        name: 'Created',
        password: PASSWORD,
        role: 'user',
      });
      assert.equal(res.statusCode, 201, res.body);
      const { id } = json<{ id: string }>(res);
      const row = await onlyEntry(t);
      assertEntry(row, {
        action: 'user.create',
        ...byAdmin('198.51.100.2'),
        target_type: 'user',
        target_id: id,
        details: { role: 'user', via: 'api' },
      });
      assert.ok(!row.details.includes(PASSWORD));
    });

    it('refused creations (409, 422, 400) write nothing', async () => {
      const taken = await createUser(t);
      await clearAudit(t);
      const cases: [Record<string, unknown>, number][] = [
        [{ email: taken.email }, 409],
        [{ email: 'weak@example.com', password: 'short' }, 422],
        [{ email: 'not an address' }, 400],
        [{ email: 'x@example.com', extra: true }, 400],
      ];
      for (const [payload, status] of cases) {
        const res = await send('POST', '/api/v1/users', adminToken, '198.51.100.3', payload);
        assert.equal(res.statusCode, status, res.body);
      }
      assert.equal((await auditEntries(t)).length, 0);
      // A non-admin is refused before the service (403).
      const user = await createUser(t);
      const res = await send(
        'POST',
        '/api/v1/users',
        (await sessionFor(t, user)).access_token,
        '198.51.100.3',
        {
          email: 'y@example.com',
        },
      );
      assert.equal(res.statusCode, 403);
      assert.equal((await auditEntries(t)).length, 0);
    });

    it('a creation whose entry cannot be written creates no user', async () => {
      const undo = await refuseInserts(t, 'audit_log', 'action', 'user.create');
      try {
        await clearAudit(t);
        const res = await send('POST', '/api/v1/users', adminToken, '198.51.100.4', {
          email: 'never@example.com',
        });
        assert.equal(res.statusCode, 500);
      } finally {
        await undo();
      }
      assert.equal((await auditEntries(t)).length, 0);
      const row = await t.ctx.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'never@example.com')
        .executeTakeFirst();
      assert.equal(row, undefined);
    });

    it('DELETE /users/<id>: one user.delete naming the e-mail and role', async () => {
      const user = await createUser(t, { role: 'user' });
      await clearAudit(t);
      const res = await send('DELETE', `/api/v1/users/${user.id}`, adminToken, '198.51.100.5');
      assert.equal(res.statusCode, 204, res.body);
      assertEntry(await onlyEntry(t), {
        action: 'user.delete',
        ...byAdmin('198.51.100.5'),
        target_type: 'user',
        target_id: user.id,
        details: { email: user.email, role: 'user' },
      });
    });

    it('refused deletions (403 self, 404) write nothing; a failed entry deletes nobody', async () => {
      await clearAudit(t);
      const self = await send('DELETE', `/api/v1/users/${admin.id}`, adminToken, '198.51.100.6');
      assert.equal(self.statusCode, 403);
      const missing = await send(
        'DELETE',
        '/api/v1/users/01900000-0000-7000-8000-000000000000',
        adminToken,
        '198.51.100.6',
      );
      assert.equal(missing.statusCode, 404);
      assert.equal((await auditEntries(t)).length, 0);

      const user = await createUser(t);
      const undo = await refuseInserts(t, 'audit_log', 'action', 'user.delete');
      try {
        const res = await send('DELETE', `/api/v1/users/${user.id}`, adminToken, '198.51.100.6');
        assert.equal(res.statusCode, 500);
      } finally {
        await undo();
      }
      assert.equal((await auditEntries(t)).length, 0);
      assert.ok(await userRow(user.id), 'the user was not deleted');
    });

    it('PUT name and email: one user.update listing the changed fields, not their values', async () => {
      const user = await createUser(t, { name: 'Old Name' });
      await clearAudit(t);
      const res = await put(
        user.id,
        { name: 'New Name', email: `renamed-${user.id}@example.com` },
        '198.51.100.7',
      );
      assert.equal(res.statusCode, 200, res.body);
      assertEntry(await onlyEntry(t), {
        action: 'user.update',
        ...byAdmin('198.51.100.7'),
        target_type: 'user',
        target_id: user.id,
        details: { fields: ['name', 'email'] },
      });

      // A user renaming themself is the actor; an unchanged value is no change.
      const own = (await sessionFor(t, user)).access_token;
      await clearAudit(t);
      const rename = await put(user.id, { name: 'Self Named' }, '198.51.100.8', own);
      assert.equal(rename.statusCode, 200, rename.body);
      assertEntry(await onlyEntry(t), {
        action: 'user.update',
        outcome: 'success',
        actor_type: 'user',
        actor_id: user.id,
        target_type: 'user',
        target_id: user.id,
        ip: '198.51.100.8',
        user_agent: UA,
        details: { fields: ['name'] },
      });
      await clearAudit(t);
      const same = await put(user.id, { name: 'Self Named' }, '198.51.100.8', own);
      assert.equal(same.statusCode, 200, same.body);
      assert.equal((await auditEntries(t)).length, 0);

      // Refusals: a user changing their role (403), a taken e-mail (409), a bad e-mail (400).
      const refused: [string, Record<string, unknown>, number][] = [
        [own, { role: 'admin' }, 403],
        [adminToken, { email: admin.email }, 409],
        [adminToken, { email: 'nope' }, 400],
        [adminToken, { status: 'invited' }, 400],
      ];
      for (const [token, payload, status] of refused) {
        const r = await put(user.id, payload, '198.51.100.8', token);
        assert.equal(r.statusCode, status, r.body);
      }
      assert.equal((await auditEntries(t)).length, 0);
    });

    it('PUT role and status: user.role_change then user.status_change, with the revoked sessions', async () => {
      const other = await createUser(t, { role: 'admin' });
      await sessionFor(t, other);
      await sessionFor(t, other);
      await clearAudit(t);
      const res = await put(other.id, { role: 'user', status: 'disabled' }, '198.51.100.9');
      assert.equal(res.statusCode, 200, res.body);
      const rows = await auditEntries(t);
      assert.deepEqual(
        rows.map((r) => r.action),
        ['user.role_change', 'user.status_change'],
      );
      const target = { target_type: 'user', target_id: other.id };
      assertEntry(rows[0], {
        action: 'user.role_change',
        ...byAdmin('198.51.100.9'),
        ...target,
        details: { from: 'admin', to: 'user' },
      });
      assertEntry(rows[1], {
        action: 'user.status_change',
        ...byAdmin('198.51.100.9'),
        ...target,
        details: { from: 'active', to: 'disabled', sessions_revoked: 2 },
      });

      // Re-enabling revokes nothing.
      await clearAudit(t);
      const back = await put(other.id, { status: 'active' }, '198.51.100.9');
      assert.equal(back.statusCode, 200, back.body);
      assertEntry(await onlyEntry(t), {
        action: 'user.status_change',
        ...byAdmin('198.51.100.9'),
        ...target,
        details: { from: 'disabled', to: 'active', sessions_revoked: 0 },
      });
    });

    it('PUT password by an admin: one password.change, by_admin, with the revoked sessions', async () => {
      const user = await createUser(t, { password: PASSWORD });
      await sessionFor(t, user);
      await clearAudit(t);
      const newPassword = 'an admin chosen passphrase 9';
      const res = await put(user.id, { password: newPassword }, '198.51.100.10');
      assert.equal(res.statusCode, 200, res.body);
      const row = await onlyEntry(t);
      assertEntry(row, {
        action: 'password.change',
        ...byAdmin('198.51.100.10'),
        target_type: 'user',
        target_id: user.id,
        details: { by_admin: true, sessions_revoked: 1 },
      });
      assert.ok(!row.details.includes(newPassword));

      await clearAudit(t);
      const weak = await put(user.id, { password: 'short' }, '198.51.100.10');
      assert.equal(weak.statusCode, 422);
      assert.equal((await auditEntries(t)).length, 0);
    });

    it('a PUT whose second entry fails leaves neither entry nor the change', async () => {
      const user = await createUser(t);
      await sessionFor(t, user);
      // The role_change entry is inserted first; refusing the status_change insert fails the
      // transaction after it.
      const undo = await refuseInserts(t, 'audit_log', 'action', 'user.status_change');
      try {
        await clearAudit(t);
        const res = await put(
          user.id,
          { role: 'admin', status: 'disabled', name: 'Changed' },
          '198.51.100.11',
        );
        assert.equal(res.statusCode, 500);
      } finally {
        await undo();
      }
      assert.equal((await auditEntries(t)).length, 0);
      const row = await userRow(user.id);
      assert.equal(row?.role, 'user');
      assert.equal(row?.status, 'active');
      assert.equal(row?.name, 'Test User');
      assert.equal(await liveSessions(user.id), 1, 'the sessions were not revoked');
    });
  });
}
