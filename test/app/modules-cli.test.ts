import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, PUBLIC_URL, TEST_SECRETS_KEY, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';

// `gatehouse modules list|enable|disable` (README, "Modules") and `gatehouse clients update`
// (docs/oauth.md): the admin API's switches and client edit for an operator at the shell.
for (const dialect of DIALECTS) {
  describe(`gatehouse modules … and clients update [${dialect}]`, () => {
    let t: TestApp;
    const env = { API_FORM: 'full', PUBLIC_URL, SECRETS_KEY: TEST_SECRETS_KEY };
    const cli = (args: string[]) => runCli(args, t.databaseUrl, env);

    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t?.destroy());

    it('regression: console switched off from the console had no way back but raw SQL; modules enable brings it back', async () => {
      const listed = await cli(['modules', 'list']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /^console +on +optional +Admin console at \/admin$/m);
      assert.match(listed.stdout, /^core +on +required /m);

      const off = await cli(['modules', 'disable', 'console']);
      assert.equal(off.code, 0, off.stderr);
      assert.equal(off.stdout.trim(), 'console is off');
      // The running service follows the stored switch (the refresh every instance runs).
      await t.ctx.modules.refresh();
      assert.equal((await t.app.inject({ method: 'GET', url: '/admin' })).statusCode, 404);
      assert.match((await cli(['modules', 'list'])).stdout, /^console +off /m);

      const on = await cli(['modules', 'enable', 'console']);
      assert.equal(on.code, 0, on.stderr);
      assert.equal(on.stdout.trim(), 'console is on');
      await t.ctx.modules.refresh();
      assert.equal((await t.app.inject({ method: 'GET', url: '/admin' })).statusCode, 200);
      assert.equal((await cli(['modules', 'enable', 'console'])).stdout.trim(), 'console was already on');

      // The audit says who: the system, for each switch.
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: 'root@gatehouse.test', password: 'correct horse battery staple 42' },
      });
      const token = json<{ access_token: string }>(login).access_token;
      const audit = await t.app.inject({
        method: 'GET',
        url: '/api/v1/admin/audit?action=module.toggle',
        headers: { authorization: `Bearer ${token}` },
      });
      const entries = json<{ data: Array<{ actor_type: string; target_id: string | null }> }>(audit).data;
      assert.equal(entries.filter((e) => e.actor_type === 'system' && e.target_id === 'console').length, 2);
    });

    it('refusals are one line: a required module, an unknown name', async () => {
      const required = await cli(['modules', 'disable', 'core']);
      assert.equal(required.code, 1);
      assert.equal(required.stderr.trim(), 'gatehouse: The core module is required and cannot be disabled');
      const unknown = await cli(['modules', 'enable', 'nope']);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr.trim(), /^gatehouse: there is no module named "nope"; the modules: core, /);
    });

    it('clients update changes only the options given, with the API’s checks', async () => {
      const created = await cli([
        'clients',
        'create',
        '--name',
        'Wiki',
        '--redirect-uris',
        'https://wiki.example.test/cb',
      ]);
      assert.equal(created.code, 0, created.stderr);
      const id = /client_id (\S+)/.exec(created.stdout)?.[1] as string;
      const updated = await cli([
        'clients',
        'update',
        id,
        '--name',
        'Team wiki',
        '--redirect-uris',
        'https://wiki.example.test/cb,https://wiki.example.test/cb2',
      ]);
      assert.equal(updated.code, 0, updated.stderr);
      assert.match(updated.stdout, new RegExp(`^updated client ${id}: Team wiki$`, 'm'));
      assert.match(
        updated.stdout,
        /^redirect_uris https:\/\/wiki\.example\.test\/cb https:\/\/wiki\.example\.test\/cb2$/m,
      );
      const listed = await cli(['clients', 'list']);
      assert.match(listed.stdout, new RegExp(`^${id}\\tconfidential\\tthird-party\\tTeam wiki$`, 'm'));
      // The scopes were not given: unchanged.
      assert.match(updated.stdout, /scopes openid profile email$/m);

      const bad = await cli(['clients', 'update', id, '--redirect-uris', 'ftp://wiki.example.test/cb']);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /^gatehouse: .*redirect/i);
      const nothing = await cli(['clients', 'update', id]);
      assert.equal(nothing.code, 1);
      assert.match(nothing.stderr, /nothing to change/);
      const missing = await cli(['clients', 'update', '0'.repeat(32), '--name', 'x']);
      assert.equal(missing.code, 1);
    });
  });
}
