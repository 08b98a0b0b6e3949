import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { signingSecrets } from '../../src/modules/webhooks/secrets.ts';
import { signedHeaders } from '../../src/platform/outbound/standard-webhooks.ts';
import { buildTestApp, TEST_SECRETS_KEY, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';

for (const dialect of DIALECTS) {
  describe(`gatehouse webhooks CLI [${dialect}]`, () => {
    let t: TestApp;
    const env = { SECRETS_KEY: TEST_SECRETS_KEY, API_FORM: 'full' };
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    it('adds (printing the secret once, sealed the same way the API seals it), lists, enables and removes', async () => {
      const add = await runCli(
        [
          'webhooks',
          'add',
          '--url',
          'https://hooks.example.com/cli',
          '--events',
          'user.created,user.deleted',
        ],
        t.databaseUrl,
        env,
      );
      assert.equal(add.code, 0, add.stderr);
      const id = /^added (\S+)/m.exec(add.stdout)?.[1] ?? '';
      const secret = /^secret (whsec_\S+)$/m.exec(add.stdout)?.[1] ?? '';
      // The service opens what the CLI sealed: a signature made with it verifies with the printed secret.
      const row = await t.ctx.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const [opened] = signingSecrets(t.ctx, { ...row, endpoint_id: id }, Date.now());
      const h = signedHeaders('evt', '{}', [String(opened)]);
      assert.doesNotThrow(() => new Webhook(secret).verify('{}', h));
      await t.ctx.db.updateTable('webhook_endpoints').set({ enabled: 0 }).execute();
      const list = await runCli(['webhooks', 'list'], t.databaseUrl, env);
      assert.match(
        list.stdout,
        new RegExp(`^${id}  disabled  https://hooks.example.com/cli  user.created,user.deleted$`, 'm'),
      );
      assert.equal((await runCli(['webhooks', 'enable', '--id', id], t.databaseUrl, env)).code, 0);
      assert.equal(
        (await t.ctx.db.selectFrom('webhook_endpoints').select('enabled').executeTakeFirstOrThrow()).enabled,
        1,
      );
      assert.equal((await runCli(['webhooks', 'remove', '--id', id], t.databaseUrl, env)).code, 0);
      const again = await runCli(['webhooks', 'remove', '--id', id], t.databaseUrl, env);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /No such webhook endpoint/);
    });

    it('refuses what the API refuses: a private literal address, an unknown event type', async () => {
      const priv = await runCli(['webhooks', 'add', '--url', 'https://10.1.2.3/'], t.databaseUrl, env);
      assert.equal(priv.code, 1);
      assert.match(priv.stderr, /private/);
      const bad = await runCli(
        ['webhooks', 'add', '--url', 'https://x.example/', '--events', 'user.exploded'],
        t.databaseUrl,
        env,
      );
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /unknown event type\(s\): user.exploded/);
    });
  });
}
