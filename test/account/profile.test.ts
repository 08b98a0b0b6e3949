import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';

interface Profile {
  id: string;
  email: string;
  identities: Array<{ issuer: string; subject: string; linked_at: string }>;
  sessions: Array<{ id: string; created_at: string; last_used_at: string; current: boolean }>;
  [field: string]: unknown;
}

for (const dialect of DIALECTS) {
  describe(`GET /api/v1/profile [${dialect}]`, () => {
    let t: TestApp;
    const profile = (access: string) =>
      t.app.inject({ url: '/api/v1/profile', headers: { authorization: `Bearer ${access}` } });

    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('returns the user object with identities and live sessions, marking the current one', async () => {
      const user = await createUser(t, { name: 'Ada Lovelace' });
      const other = await createUser(t);
      const linkedAt = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
      await t.ctx.db
        .insertInto('identities')
        .values([
          {
            id: uuidv7(),
            user_id: user.id,
            issuer: 'https://idp.example.com',
            subject: 'sub-123',
            email: user.email,
            linked_at: linkedAt,
          },
          {
            id: uuidv7(),
            user_id: other.id,
            issuer: 'https://idp.example.com',
            subject: 'x',
            email: null,
            linked_at: 1,
          },
        ])
        .execute();
      const older = await sessionFor(t, user);
      const revoked = await sessionFor(t, user);
      const current = await sessionFor(t, user);
      await sessionFor(t, other);
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: { authorization: `Bearer ${revoked.access_token}` },
      });

      const res = await profile(current.access_token);
      assert.equal(res.statusCode, 200);
      const body = json<Profile>(res);
      assert.deepEqual(Object.keys(body).sort(), [
        'created_at',
        'email',
        'email_verified',
        'id',
        'identities',
        'kind',
        'last_login_at',
        // API §24: users gain `locale`.
        'locale',
        'name',
        'role',
        'sessions',
        'status',
        'updated_at',
      ]);
      assert.equal(body.id, user.id);
      assert.equal(body.name, 'Ada Lovelace');
      assert.deepEqual(body.identities, [
        {
          issuer: 'https://idp.example.com',
          subject: 'sub-123',
          linked_at: new Date(linkedAt).toISOString(),
        },
      ]);

      const sid = async (access: string) =>
        json<{ session_id: string }>(
          await t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${access}` } }),
        ).session_id;
      const currentId = await sid(current.access_token);
      const olderId = await sid(older.access_token);
      assert.equal(body.sessions.length, 2, 'the revoked session and the other user’s are not listed');
      assert.deepEqual(body.sessions.map((s) => s.id).sort(), [currentId, olderId].sort());
      for (const s of body.sessions) {
        assert.equal(s.current, s.id === currentId);
        assert.match(s.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.match(s.last_used_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
    });

    it('leaves out expired sessions', async () => {
      const user = await createUser(t);
      const stale = await sessionFor(t, user);
      const live = await sessionFor(t, user);
      const staleId = json<{ session_id: string }>(
        await t.app.inject({
          url: '/api/v1/verify-token',
          headers: { authorization: `Bearer ${stale.access_token}` },
        }),
      ).session_id;
      await t.ctx.db
        .updateTable('sessions')
        .set({ expires_at: Date.now() - 1 })
        .where('id', '=', staleId)
        .execute();
      const body = json<Profile>(await profile(live.access_token));
      assert.equal(body.sessions.length, 1);
      assert.equal(body.sessions[0]?.current, true);
    });

    it('needs a token', async () => {
      const res = await t.app.inject({ url: '/api/v1/profile' });
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'unauthenticated');
    });

    it('answers 404 module_disabled when the account module is switched off, and the index drops it', async () => {
      const admin = await sessionFor(t, await firstAdmin(t));
      const headers = { authorization: `Bearer ${admin.access_token}` };
      const index = json<{ documentation: { auth: Record<string, string> } }>(
        await t.app.inject({ url: '/' }),
      );
      assert.deepEqual(index.documentation.auth, {
        login: 'POST /api/v1/login',
        logout: 'POST /api/v1/logout',
        refresh_token: 'POST /api/v1/refresh-token',
        verify_token: 'GET /api/v1/verify-token',
        change_password: 'PUT /api/v1/change-password',
        profile: 'GET /api/v1/profile',
      });

      const off = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/account',
        headers,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200);
      try {
        const res = await profile(admin.access_token);
        assert.equal(res.statusCode, 404);
        assert.equal(json(res).code, 'module_disabled');
        const after = json<{ documentation: { auth: Record<string, string> } }>(
          await t.app.inject({ url: '/' }),
        );
        assert.deepEqual(Object.keys(after.documentation.auth).sort(), [
          'login',
          'logout',
          'refresh_token',
          'verify_token',
        ]);
      } finally {
        await t.app.inject({
          method: 'PUT',
          url: '/api/v1/admin/modules/account',
          headers,
          payload: { enabled: true },
        });
      }
    });
  });
}
