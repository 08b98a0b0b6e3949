import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

function assetUrls(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/admin\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
}

for (const dialect of DIALECTS) {
  describe(`admin console: /admin, its assets and the identities read [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      // Form A: the console is on in every form.
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('/admin: the strict CSP, no-store, no inline script/style/handler, no data in the HTML', async () => {
      const res = await t.app.inject({ url: '/admin' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['x-frame-options'], 'DENY');
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /^default-src 'none'; script-src 'self'; style-src 'self';/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe|\*|data:/);
      const html = res.body;
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'inline script');
      assert.doesNotMatch(html, /\sstyle=|<style/i, 'inline style');
      assert.doesNotMatch(html, /\son[a-z]+=/i, 'inline event handler');
      assert.doesNotMatch(html, /https?:\/\//, 'an absolute URL (an external request)');
      // The page is the same for everyone: no user, e-mail or count is rendered by the server.
      assert.doesNotMatch(html, /@gatehouse\.test/);
      // The module pages' views are fragments of their own, included where admin.html names them.
      for (const view of ['view-oauth', 'view-providers', 'view-webhooks', 'view-webhook']) {
        assert.match(html, new RegExp(`<section id="${view}"`), view);
      }
      assert.doesNotMatch(html, /\{\{/, 'no placeholder left');
      assert.ok(html.indexOf('id="view-webhook"') < html.indexOf('<dialog id="confirm"'), 'inside #app');
      const urls = assetUrls(html);
      assert.ok(urls.some((u) => u.endsWith('/admin.js')));
      assert.ok(urls.some((u) => u.endsWith('/admin.css')));
      assert.ok(urls.some((u) => u.endsWith('/style.css')));
      for (const url of [
        ...urls,
        ...[
          'lib.js',
          'admin-core.js',
          'admin-users.js',
          'admin-oauth.js',
          'admin-oauth-token.js',
          'admin-providers.js',
          'admin-webhooks.js',
        ].map((f) => url0(urls, f)),
      ]) {
        const asset = await t.app.inject({ url });
        assert.equal(asset.statusCode, 200, url);
        assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
      }
    });

    it('the console works with pages off; turned off itself, /admin and its assets answer 404', async () => {
      const admin = await authHeaders(t, await firstAdmin(t));
      const toggle = (name: string, enabled: boolean) =>
        t.app.inject({
          method: 'PUT',
          url: `/api/v1/admin/modules/${name}`,
          headers: admin,
          payload: { enabled },
        });
      const page = await t.app.inject({ url: '/admin' });
      const [script] = assetUrls(page.body).filter((u) => u.endsWith('/admin.js'));
      assert.equal((await toggle('pages', false)).statusCode, 200);
      try {
        assert.equal((await t.app.inject({ url: '/admin' })).statusCode, 200);
        assert.equal((await t.app.inject({ url: script as string })).statusCode, 200);
        assert.equal((await toggle('console', false)).statusCode, 200);
        for (const url of ['/admin', script as string]) {
          const res = await t.app.inject({ url });
          assert.equal(res.statusCode, 404, url);
          assert.equal(json(res).code, 'module_disabled');
        }
      } finally {
        await toggle('console', true);
        await toggle('pages', true);
      }
      // The module list shows console without endpoints: the forms' index stays exact.
      const modules = json<{ data: Array<{ name: string; endpoints: string[] }> }>(
        await t.app.inject({ url: '/api/v1/admin/modules', headers: admin }),
      );
      assert.deepEqual(modules.data.find((m) => m.name === 'console')?.endpoints, []);
      const index = await t.app.inject({ url: '/' });
      assert.doesNotMatch(index.body, /admin\/assets|\/identities/);
    });

    it('GET /api/v1/users/<id>/identities: admin only, oldest first, 404 for an unknown or malformed id', async () => {
      const admin = await authHeaders(t, await firstAdmin(t));
      const user = await createUser(t);
      await t.ctx.db
        .insertInto('identities')
        .values([
          {
            id: uuidv7(),
            user_id: user.id,
            issuer: 'https://b.example',
            subject: 's2',
            email: null,
            linked_at: 2000,
          },
          {
            id: uuidv7(),
            user_id: user.id,
            issuer: 'https://a.example',
            subject: 's1',
            email: null,
            linked_at: 1000,
          },
        ])
        .execute();
      const res = await t.app.inject({ url: `/api/v1/users/${user.id}/identities`, headers: admin });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(json(res), {
        data: [
          { issuer: 'https://a.example', subject: 's1', linked_at: '1970-01-01T00:00:01.000Z' },
          { issuer: 'https://b.example', subject: 's2', linked_at: '1970-01-01T00:00:02.000Z' },
        ],
      });
      const self = await t.app.inject({
        url: `/api/v1/users/${user.id}/identities`,
        headers: await authHeaders(t, user),
      });
      assert.equal(self.statusCode, 403, 'not even on their own id: it is the console read');
      assert.equal((await t.app.inject({ url: `/api/v1/users/${user.id}/identities` })).statusCode, 401);
      for (const id of [uuidv7(), 'not-a-uuid']) {
        const missing = await t.app.inject({ url: `/api/v1/users/${id}/identities`, headers: admin });
        assert.equal(missing.statusCode, 404, id);
        assert.equal(json(missing).code, 'not_found');
      }
    });
  });
}

/** The URL of another file of the same asset version. */
function url0(urls: string[], file: string): string {
  return (urls.find((u) => u.endsWith('/admin.js')) as string).replace(/admin\.js$/, file);
}
