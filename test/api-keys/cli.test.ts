import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KEY_REGEX } from '../../src/modules/api-keys/key-format.ts';
import { buildTestApp, json, TEST_SECRETS_KEY, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { keyHeaders } from './helpers.ts';

for (const dialect of DIALECTS) {
  describe(`gatehouse keys CLI [${dialect}]`, () => {
    let t: TestApp;
    const env = { SECRETS_KEY: TEST_SECRETS_KEY, API_FORM: 'full' };
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    it('bootstraps a CI service account with a scoped key that works on the API, lists and revokes it', async () => {
      const created = await runCli(
        [
          'keys',
          'create',
          '--name',
          'ci',
          '--service-account',
          'CI bot',
          '--scopes',
          'users:read',
          '--expires-days',
          '30',
        ],
        t.databaseUrl,
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      const key = created.stdout.split('\n').find((l) => KEY_REGEX.test(l)) ?? '';
      assert.match(key, KEY_REGEX);
      const id = /^key (\S+)/m.exec(created.stdout)?.[1] ?? '';
      const users = await t.app.inject({
        method: 'GET',
        url: '/api/v1/users/search?q=CI',
        headers: keyHeaders(key),
      });
      assert.equal(users.statusCode, 403, 'the service account is no admin');
      const bot = /^service account (\S+)/m.exec(created.stdout)?.[1] ?? '';
      const self = await t.app.inject({
        method: 'GET',
        url: `/api/v1/users/${bot}`,
        headers: keyHeaders(key),
      });
      assert.equal(self.statusCode, 200);
      assert.equal(json<{ kind: string }>(self).kind, 'service');
      const list = await runCli(['keys', 'list'], t.databaseUrl, env);
      assert.match(
        list.stdout,
        new RegExp(`^${id}  ${key.slice(0, 12)}  user:${bot}  \\S+  users:read  ci$`, 'm'),
      );
      assert.equal(list.stdout.includes(key), false, 'the list never shows the key');
      assert.equal((await runCli(['keys', 'revoke', '--id', id], t.databaseUrl, env)).code, 0);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: `/api/v1/users/${bot}`, headers: keyHeaders(key) }))
          .statusCode,
        401,
      );
      const again = await runCli(['keys', 'revoke', '--id', id], t.databaseUrl, env);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /No such API key/);
    });

    it('refuses a bad scope or owner with one line and stores nothing', async () => {
      const before = await t.ctx.db.selectFrom('api_keys').select('id').execute();
      const typo = await runCli(
        ['keys', 'create', '--name', 'x', '--email', 'root@gatehouse.test', '--scopes', 'users:reed'],
        t.databaseUrl,
        env,
      );
      assert.equal(typo.code, 1);
      assert.match(typo.stderr, /scopes/);
      const nobody = await runCli(
        ['keys', 'create', '--name', 'x', '--email', 'nobody@gatehouse.test'],
        t.databaseUrl,
        env,
      );
      assert.equal(nobody.code, 1);
      const two = await runCli(
        ['keys', 'create', '--name', 'x', '--email', 'a@b.c', '--service-account', 'y'],
        t.databaseUrl,
        env,
      );
      assert.equal(two.code, 1);
      assert.equal((await t.ctx.db.selectFrom('api_keys').select('id').execute()).length, before.length);
    });
  });
}
