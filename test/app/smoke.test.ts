import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

for (const dialect of DIALECTS) {
  describe(`smoke [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('serves liveness, the index and the admin module list to an admin', async () => {
      assert.equal((await t.app.inject({ url: '/health' })).statusCode, 200);
      const index = json(await t.app.inject({ url: '/' }));
      assert.equal(index.status, 'running');
      const headers = await authHeaders(t, await firstAdmin(t));
      const res = await t.app.inject({ url: '/api/v1/admin/modules', headers });
      assert.equal(res.statusCode, 200);
      // The nine of docs/api.md §2, then the optional modules in the order of §2 (pages and console
      // last, §15).
      assert.deepEqual(
        json<{ data: Array<{ name: string }> }>(res).data.map((m) => m.name),
        [
          ...['core', 'health', 'admin', 'auth', 'users', 'account', 'user_admin', 'idp', 'invitations'],
          ...['audit', 'recovery', 'email', 'registration', 'mfa', 'passkeys', 'sessions'],
          ...[
            'oauth',
            'providers',
            'webhooks',
            'passwordless',
            'organizations',
            'api_keys',
            'sso',
            'pages',
            'console',
          ],
        ],
      );
      const verify = await t.app.inject({ url: '/api/v1/verify-token', headers });
      assert.equal(verify.statusCode, 200);
    });
  });
}
