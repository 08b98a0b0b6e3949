import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { countFor, idpEnv, problem, signInThroughIdp } from '../helpers/idp.ts';
import { createUser } from '../helpers/users.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

// docs/api.md §16: where the linking rules refuse (409 identity_link_required), an operator links
// with `gatehouse users link-identity --email E --issuer I --subject S`; audited as identity.link.

for (const dialect of DIALECTS) {
  describe(`gatehouse users link-identity [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;
    const cli = (args: string[]) =>
      runCli(['users', 'link-identity', ...args], t.databaseUrl, {
        OIDC_ISSUER: op.issuer,
        OIDC_CLIENT_ID: op.clientId,
      });

    before(async () => {
      op = await startOidcProvider();
      t = await buildTestApp(dialect, { env: idpEnv(op) });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('link-identity-cli: links an admin account the rules refuse, audited; the identity then signs in', async () => {
      const admin = await createUser(t, { email: 'ops-admin@example.com', role: 'admin' });
      op.setAccount('ops-admin', { email: 'ops-admin@example.com', email_verified: true });
      const refused = await signInThroughIdp(t, op, 'ops-admin');
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(problem(refused).code, 'identity_link_required');

      const res = await cli([
        '--email',
        'OPS-Admin@example.com',
        '--issuer',
        op.issuer,
        '--subject',
        'ops-admin',
      ]);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, `linked ${op.issuer} ops-admin to ops-admin@example.com\n`);
      assert.deepEqual(await countFor(t, 'ops-admin@example.com', 'ops-admin'), { users: 1, identities: 1 });

      const entry = await t.ctx.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'identity.link')
        .where('actor_type', '=', 'system')
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(entry.details), {
        issuer: op.issuer,
        subject: 'ops-admin',
        user_id: admin.id,
        by: 'operator',
        via: 'cli.link_identity',
      });

      const signedIn = await signInThroughIdp(t, op, 'ops-admin');
      assert.equal(signedIn.statusCode, 200, signedIn.body);
      assert.equal(json<{ user: { id: string } }>(signedIn).user.id, admin.id);

      // Again: nothing changes.
      const twice = await cli([
        '--email',
        'ops-admin@example.com',
        '--issuer',
        op.issuer,
        '--subject',
        'ops-admin',
      ]);
      assert.equal(twice.code, 0, twice.stderr);
      assert.match(twice.stdout, /was already linked/);
    });

    it('refuses, in one line and changing nothing: an unknown account, a foreign issuer, an identity linked elsewhere', async () => {
      const one = await createUser(t, { email: 'one@example.com' });
      await createUser(t, { email: 'two@example.com' });
      const before = await cli(['--email', 'one@example.com', '--issuer', op.issuer, '--subject', 'shared']);
      assert.equal(before.code, 0, before.stderr);

      const cases: Array<[string[], RegExp]> = [
        [
          ['--email', 'nobody@example.com', '--issuer', op.issuer, '--subject', 's'],
          /no user with the e-mail/,
        ],
        [
          ['--email', 'two@example.com', '--issuer', `${op.issuer}/`, '--subject', 's'],
          /configured provider's issuer/,
        ],
        [
          ['--email', 'two@example.com', '--issuer', op.issuer, '--subject', 'shared'],
          /already linked to another account/,
        ],
        [
          ['--email', 'two@example.com', '--issuer', op.issuer, '--subject', 'a\u0007b'],
          /control characters/,
        ],
      ];
      for (const [args, message] of cases) {
        const res = await cli(args);
        assert.equal(res.code, 1, `${args.join(' ')}: ${res.stdout}`);
        assert.match(res.stderr, message);
        assert.equal(res.stderr.split('\n').filter(Boolean).length, 1, res.stderr);
      }
      const identities = await t.ctx.db.selectFrom('identities').select(['user_id', 'subject']).execute();
      assert.deepEqual(
        identities.filter((i) => i.subject === 'shared' || i.subject === 's'),
        [{ user_id: one.id, subject: 'shared' }],
      );
    });
  });
}
