import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

// Issue 17.9: /openapi.json listed the endpoints of disabled modules, which the index hides.
type Spec = { paths: Record<string, Record<string, { operationId?: string }>> };

const operationIds = (spec: Spec) =>
  Object.values(spec.paths).flatMap((item) => Object.values(item).map((op) => op.operationId ?? ''));

for (const dialect of DIALECTS) {
  describe(`/openapi.json lists only enabled modules [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect); // form A: invitations, audit, recovery… off
    });
    after(() => t.destroy());

    const documents = async () => {
      const spec = json<Spec>(await t.app.inject({ url: '/openapi.json' }));
      const page = json<Spec>(await t.app.inject({ url: '/docs/json' }));
      assert.deepEqual(page, spec, "the docs page's copy is the same document");
      return spec;
    };

    it('openapi-lists-disabled-modules: form A lists neither invitations, audit nor users.unlock', async () => {
      const spec = await documents();
      const ids = operationIds(spec);
      for (const hidden of ['users.invite', 'auth.invite', 'admin.audit', 'users.unlock']) {
        assert.ok(!ids.includes(hidden), `${hidden} is listed`);
      }
      assert.equal(spec.paths['/api/v1/invite/{token}'], undefined);
      for (const shown of ['auth.login', 'users.create', 'idp.verify', 'auth.change_password']) {
        assert.ok(ids.includes(shown), `${shown} is missing`);
      }
    });

    it('openapi-lists-disabled-modules: a toggle shows or hides its endpoints at once', async () => {
      const headers = await authHeaders(t, await firstAdmin(t));
      const toggle = async (name: string, enabled: boolean) => {
        const res = await t.app.inject({
          method: 'PUT',
          url: `/api/v1/admin/modules/${name}`,
          headers,
          payload: { enabled },
        });
        assert.equal(res.statusCode, 200, res.body);
      };
      await toggle('invitations', true);
      assert.ok(operationIds(await documents()).includes('users.invite'));
      await toggle('idp', false);
      await toggle('invitations', false);
      const ids = operationIds(await documents());
      assert.ok(!ids.includes('users.invite'));
      assert.ok(!ids.includes('idp.verify') && !ids.includes('idp.config'));
      await toggle('idp', true);
      assert.ok(operationIds(await documents()).includes('idp.verify'));
    });
  });
}
