import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { auditEntries } from '../helpers/audit.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';
import { PASSWORD } from './helpers.ts';

interface SessionItem {
  id: string;
  created_at: string;
  last_used_at: string;
  user_agent: string | null;
  ip: string | null;
  amr: string[];
  current: boolean;
}

for (const dialect of DIALECTS) {
  describe(`sessions module [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full', TRUST_PROXY: 'true' } });
    });
    after(() => t.destroy());

    const login = async (email: string, userAgent: string, forwardedFor: string) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        remoteAddress: '127.0.0.1',
        headers: { 'user-agent': userAgent, 'x-forwarded-for': forwardedFor },
        payload: { email, password: PASSWORD },
      });
      assert.equal(res.statusCode, 200, res.body);
      return json<{ access_token: string }>(res).access_token;
    };
    const get = (token: string, url: string) =>
      t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    const del = (token: string, url: string) =>
      t.app.inject({ method: 'DELETE', url, headers: { authorization: `Bearer ${token}` } });

    it('lists live sessions with user agent (cut at 256), address as TRUST_PROXY resolves it, and current', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const longAgent = `Mozilla/5.0 ${'x'.repeat(400)}`;
      const first = await login(user.email, longAgent, '203.0.113.7');
      const second = await login(user.email, 'curl/8', '198.51.100.9');
      const res = await get(second, '/api/v1/sessions');
      assert.equal(res.statusCode, 200);
      const { data } = json<{ data: SessionItem[] }>(res);
      assert.equal(data.length, 2);
      const [newest, oldest] = data as [SessionItem, SessionItem];
      assert.equal(newest.current, true);
      assert.equal(oldest.current, false);
      assert.equal(newest.user_agent, 'curl/8');
      assert.equal(newest.ip, '198.51.100.9');
      assert.equal(oldest.user_agent, longAgent.slice(0, 256));
      assert.equal(oldest.ip, '203.0.113.7');
      assert.deepEqual(newest.amr, ['pwd']);

      // Revoking one's own other session; it vanishes from the list (live sessions only).
      const revoke = await del(second, `/api/v1/sessions/${oldest.id}`);
      assert.equal(revoke.statusCode, 204);
      assert.equal((await get(first, '/api/v1/verify-token')).statusCode, 401);
      const after = json<{ data: SessionItem[] }>(await get(second, '/api/v1/sessions')).data;
      assert.deepEqual(
        after.map((s) => s.id),
        [newest.id],
      );
      const again = await del(second, `/api/v1/sessions/${oldest.id}`);
      assert.equal(again.statusCode, 404);
    });

    it("another user's session is 404 and stays alive", async () => {
      const a = await createUser(t, { password: PASSWORD });
      const b = await createUser(t, { password: PASSWORD });
      const aToken = (await sessionFor(t, a)).access_token;
      const bToken = (await sessionFor(t, b)).access_token;
      const bSession = json<{ data: SessionItem[] }>(await get(bToken, '/api/v1/sessions'))
        .data[0] as SessionItem;
      const res = await del(aToken, `/api/v1/sessions/${bSession.id}`);
      assert.equal(res.statusCode, 404);
      assert.equal(json(res).code, 'not_found');
      assert.equal((await get(bToken, '/api/v1/verify-token')).statusCode, 200);
    });

    it('an admin lists and revokes a user’s sessions; a non-admin gets 403', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const userToken = (await sessionFor(t, user)).access_token;
      const admin = await firstAdmin(t);
      const adminToken = (await sessionFor(t, admin)).access_token;
      assert.equal((await get(userToken, `/api/v1/users/${user.id}/sessions`)).statusCode, 403);
      const list = await get(adminToken, `/api/v1/users/${user.id}/sessions`);
      assert.equal(list.statusCode, 200);
      const [only] = json<{ data: SessionItem[] }>(list).data as [SessionItem];
      assert.equal(only.current, false);
      const wrongUser = await del(adminToken, `/api/v1/users/${admin.id}/sessions/${only.id}`);
      assert.equal(wrongUser.statusCode, 404);
      const res = await del(adminToken, `/api/v1/users/${user.id}/sessions/${only.id}`);
      assert.equal(res.statusCode, 204);
      assert.equal((await get(userToken, '/api/v1/verify-token')).statusCode, 401);
      const unknown = await get(adminToken, '/api/v1/users/0190a000-0000-7000-8000-000000000000/sessions');
      assert.equal(unknown.statusCode, 404);
      const entry = (await auditEntries(t)).find(
        (e) => e.action === 'session.revoke' && e.target_id === only.id,
      );
      assert.equal(entry?.actor_id, admin.id);
    });
  });
}
