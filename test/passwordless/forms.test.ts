import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

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

for (const dialect of DIALECTS) {
  describe(`passwordless off while accounts sign in only by e-mail: 409 module_in_use [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    const toggle = async (body: Record<string, unknown>) =>
      t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/passwordless',
        headers: await authHeaders(t, await firstAdmin(t)),
        payload: body,
      });

    it('no such account: switched off and on freely', async () => {
      assert.equal((await toggle({ enabled: false })).statusCode, 200);
      assert.equal((await toggle({ enabled: true })).statusCode, 200);
    });

    it('an account without a password: 409 naming how many, unless force', async () => {
      await createUser(t, { email: 'nopass@example.com' });
      await createUser(t, { email: 'haspass@example.com', password: 'a long and unusual passphrase 7' });
      const refused = await toggle({ enabled: false });
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(json(refused).code, 'module_in_use');
      assert.match(String(json(refused).detail), /^1 account has no other way to sign in/);
      assert.equal((await toggle({ enabled: false, force: true })).statusCode, 200);
      assert.equal((await toggle({ enabled: true })).statusCode, 200);
    });

    it('force is refused while every active admin signs in only by e-mail', async () => {
      const admin = await firstAdmin(t);
      const headers = await authHeaders(t, admin);
      await t.ctx.db.updateTable('users').set({ password_hash: null }).where('id', '=', admin.id).execute();
      const forced = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/passwordless',
        headers,
        payload: { enabled: false, force: true },
      });
      assert.equal(forced.statusCode, 409, forced.body);
      assert.match(String(json(forced).detail), /no active admin able to sign in/);
    });
  });
}
