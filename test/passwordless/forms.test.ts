import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

const ROUTES = ['/api/v1/login/email', '/api/v1/login/email/verify'];
const LINK_PAGE = `/account/sign-in/email/${'A'.repeat(43)}`;

for (const dialect of DIALECTS) {
  for (const form of ['A', 'B'] as const) {
    describe(`passwordless in form ${form}: neither listed nor served [${dialect}]`, () => {
      let t: TestApp;
      before(async () => {
        t = await buildTestApp(dialect, { env: { API_FORM: form } });
      });
      after(() => t.destroy());

      it('the index does not list it, its endpoints answer 404 module_disabled, the pages do not offer it', async () => {
        const index = await t.app.inject({ url: '/' });
        assert.ok(!index.body.includes('login_email'), 'not in the index');
        for (const url of ROUTES) {
          const res = await t.app.inject({ method: 'POST', url, payload: { email: 'a@example.com' } });
          assert.equal(res.statusCode, 404, `${url}: ${res.body}`);
          assert.equal(json(res).code, 'module_disabled');
        }
        const signIn = await t.app.inject({ url: '/account/sign-in' });
        assert.equal(signIn.statusCode, 200);
        const modules = /data-modules="([^"]*)"/.exec(signIn.body)?.[1] ?? '';
        assert.ok(!modules.split(' ').includes('passwordless'), 'the sign-in page is not told about it');
        const page = await t.app.inject({ url: LINK_PAGE });
        assert.equal(page.statusCode, 404);

        const admin = await authHeaders(t, await firstAdmin(t));
        const list = json<{ data: Array<{ name: string; enabled: boolean }> }>(
          await t.app.inject({ url: '/api/v1/admin/modules', headers: admin }),
        ).data;
        assert.equal(list.find((m) => m.name === 'passwordless')?.enabled, false, 'in the module list, off');
      });

      it('an admin can switch it on at run time: then it is listed and served', async () => {
        const admin = await authHeaders(t, await firstAdmin(t));
        const on = await t.app.inject({
          method: 'PUT',
          url: '/api/v1/admin/modules/passwordless',
          headers: admin,
          payload: { enabled: true },
        });
        assert.equal(on.statusCode, 200, on.body);
        const doc = json<{ documentation: Record<string, Record<string, string>> }>(
          await t.app.inject({ url: '/' }),
        ).documentation;
        assert.equal(doc.auth?.login_email, 'POST /api/v1/login/email');
        assert.equal(doc.auth?.login_email_verify, 'POST /api/v1/login/email/verify');
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/login/email',
          payload: { email: 'a@example.com' },
        });
        assert.equal(res.statusCode, 202, res.body);
        assert.equal((await t.app.inject({ url: LINK_PAGE })).statusCode, 200);
      });
    });
  }
}
