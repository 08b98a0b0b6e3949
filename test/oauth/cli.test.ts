import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PUBLIC_URL, TEST_SECRETS_KEY } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { type OauthStack, startOauthApp } from './support.ts';

// docs/api.md §17: `gatehouse clients create|list|delete|registration-token`.
for (const dialect of DIALECTS) {
  describe(`gatehouse clients … [${dialect}]`, () => {
    let s: OauthStack;
    const env = {
      API_FORM: 'full',
      PUBLIC_URL,
      SECRETS_KEY: TEST_SECRETS_KEY,
      OAUTH_DYNAMIC_REGISTRATION: 'token',
    };
    const cli = (args: string[]) => runCli(['clients', ...args], s.t.databaseUrl, env);

    before(async () => {
      s = await startOauthApp(dialect, { OAUTH_DYNAMIC_REGISTRATION: 'token' });
    });
    after(() => s?.close());

    it('creates (secret printed once), lists and deletes a client', async () => {
      const created = await cli([
        'create',
        '--name',
        'Wiki',
        '--redirect-uris',
        'https://wiki.example.test/cb',
      ]);
      assert.equal(created.code, 0, created.stderr);
      const id = /client_id (\S+)/.exec(created.stdout)?.[1];
      const secret = /client_secret (\S+)/.exec(created.stdout)?.[1];
      assert.ok(id && secret);
      // client-id-read-as-an-option: a base64url id starting with '-' could not be named on the
      // command line (`clients delete -m…` is an unknown option); ids are hex.
      assert.match(id, /^[0-9a-f]{32}$/);
      const listed = await cli(['list']);
      assert.match(listed.stdout, new RegExp(`${id}\\tconfidential\\tthird-party\\tWiki`));
      assert.ok(!listed.stdout.includes(secret));
      const bad = await cli(['create', '--name', 'Bad', '--redirect-uris', 'http://wiki.example.test/cb']);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /https/);
      assert.equal((await cli(['delete', id])).code, 0);
      assert.equal((await cli(['delete', id])).code, 1);
    });

    it('creates a confidential client exempt from PKCE with --pkce-optional, and refuses it for a public one', async () => {
      const created = await cli([
        'create',
        '--name',
        'Passport app',
        '--redirect-uris',
        'http://localhost:3000/login/callback',
        '--pkce-optional',
      ]);
      assert.equal(created.code, 0, created.stderr);
      const id = /client_id (\S+)/.exec(created.stdout)?.[1];
      assert.equal((await s.admin('GET', `/api/v1/clients/${id}`)).body.pkce_required, false);
      const pub = await cli([
        'create',
        '--name',
        'SPA',
        '--type',
        'public',
        '--redirect-uris',
        'https://spa.example.test/cb',
        '--pkce-optional',
      ]);
      assert.equal(pub.code, 1);
      assert.match(pub.stderr, /pkce_required may be false for a confidential client only/);
    });

    it('clients update switches pkce_required with --pkce-optional and --pkce-required (public: refused)', async () => {
      const created = await cli([
        'create',
        '--name',
        'Later',
        '--redirect-uris',
        'https://later.example.test/cb',
      ]);
      assert.equal(created.code, 0, created.stderr);
      const id = /client_id (\S+)/.exec(created.stdout)?.[1] as string;
      const pkceOf = async () => (await s.admin('GET', `/api/v1/clients/${id}`)).body.pkce_required;
      assert.equal(await pkceOf(), true);
      const optional = await cli(['update', id, '--pkce-optional']);
      assert.equal(optional.code, 0, optional.stderr);
      assert.match(optional.stdout, /^pkce_required false$/m);
      assert.equal(await pkceOf(), false);
      const required = await cli(['update', id, '--pkce-required']);
      assert.equal(required.code, 0, required.stderr);
      assert.match(required.stdout, /^pkce_required true$/m);
      assert.equal(await pkceOf(), true);
      const both = await cli(['update', id, '--pkce-optional', '--pkce-required']);
      assert.equal(both.code, 1);
      assert.match(both.stderr, /--pkce-optional and --pkce-required exclude each other/);
      assert.equal(await pkceOf(), true);

      const pub = await cli([
        'create',
        '--name',
        'SPA later',
        '--type',
        'public',
        '--redirect-uris',
        'https://spa-later.example.test/cb',
      ]);
      assert.equal(pub.code, 0, pub.stderr);
      const pubId = /client_id (\S+)/.exec(pub.stdout)?.[1] as string;
      const refused = await cli(['update', pubId, '--pkce-optional']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /pkce_required may be false for a confidential client only/);
      assert.equal((await s.admin('GET', `/api/v1/clients/${pubId}`)).body.pkce_required, true);
    });

    it('registration-token prints an initial access token that registers a client once OAUTH_DYNAMIC_REGISTRATION=token', async () => {
      const made = await cli(['registration-token', '--ttl', '600']);
      assert.equal(made.code, 0, made.stderr);
      const token = made.stdout.split('\n')[0]?.trim() as string;
      const body = JSON.stringify({ redirect_uris: ['https://agent.example.test/cb'], client_name: 'Agent' });
      const without = await fetch(`${s.origin}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      assert.equal(without.status, 401);
      const withToken = await fetch(`${s.origin}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
      });
      assert.equal(withToken.status, 201, await withToken.clone().text());
      assert.match(((await withToken.clone().json()) as { client_id: string }).client_id, /^[0-9a-f]{32}$/);
      const rows = await s.t.ctx.db.selectFrom('oauth_models').select('payload').execute();
      assert.ok(
        rows.every((r) => !r.payload.includes(token)),
        'the token is stored hashed',
      );
      // One client per token (the service the admin API shares), and the CLI is audited as the system.
      const again = await fetch(`${s.origin}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
      });
      assert.equal(again.status, 401);
      const audit = await s.t.ctx.db
        .selectFrom('audit_log')
        .select(['actor_type', 'details'])
        .where('action', '=', 'oauth.registration_token_create')
        .execute();
      assert.deepEqual(
        audit.map((a) => [a.actor_type, JSON.parse(a.details).ttl_s]),
        [['system', 600]],
      );
      const tooShort = await cli(['registration-token', '--ttl', '59']);
      assert.equal(tooShort.code, 1);
      assert.match(tooShort.stderr, /between 60 and 31536000/);
    });
  });
}
