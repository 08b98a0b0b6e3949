import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator } from 'kysely/migration';
import { openDatabase } from '../../src/platform/db/database.ts';
import { migrations } from '../../src/platform/db/migrations/index.ts';
import { buildTestApp, testEnv } from '../helpers/app.ts';
import { runEntry } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { enableTotp, userWithSession } from '../mfa/helpers.ts';
import { startOidcProvider } from '../support/oidc-provider.ts';
import { freePort, type ServiceProcess, startServiceProcess } from '../support/service-process.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';

// docs/operations.md, "gatehouse doctor": one line per check, each not-ok line with its fix, exit 1
// on any failure. Every target is on loopback: the service, the SMTP helper, the databases.

const CHECKS = ['database', 'clock', 'public-url', 'proxy', 'passkeys', 'secrets-key', 'smtp', 'idp'];

const doctor = (env: Record<string, string>, ...args: string[]) =>
  runEntry('src/cli.ts', ['doctor', ...args], { ...env, LOG_LEVEL: 'silent' });

/** The line of one check; fails the test when there is not exactly one. */
function lineOf(stdout: string, name: string): string {
  const lines = stdout.split('\n').filter((l) => new RegExp(`^(ok|warn|fail) +${name} `).test(l));
  assert.equal(lines.length, 1, `one ${name} line expected in:\n${stdout}`);
  return lines[0] ?? '';
}

for (const dialect of DIALECTS) {
  describe(`gatehouse doctor [${dialect}]`, () => {
    let database: TestDatabase;
    let smtp: SmtpHarness;
    let service: ServiceProcess;
    let env: Record<string, string>;
    before(async () => {
      smtp = await startSmtpServer();
      database = await createTestDatabase(dialect);
      const port = await freePort();
      // localhost: a valid passkey RP ID on plain http, so a healthy setup has no warning.
      env = testEnv(database.url, {
        API_FORM: 'full',
        PUBLIC_URL: `http://localhost:${port}`,
        SMTP_URL: smtp.url,
        PORT: String(port),
        HOST: '127.0.0.1',
      });
      service = await startServiceProcess(env, 600, port);
    });
    after(async () => {
      await service?.stop();
      await smtp?.stop();
      await database?.drop();
    });

    it('a healthy, running setup: every check ok, a test mail delivered, exit 0', async () => {
      const res = await doctor(env, '--mail-to', 'ops@gatehouse.test');
      assert.equal(res.code, 0, res.stdout + res.stderr);
      assert.equal(res.stderr, '');
      for (const name of CHECKS) assert.match(lineOf(res.stdout, name), /^ok /);
      assert.match(lineOf(res.stdout, 'database'), /all \d+ migrations applied/);
      assert.match(lineOf(res.stdout, 'smtp'), /accepted a test mail to ops@gatehouse\.test/);
      assert.match(res.stdout, /^0 failed, 0 warnings, 8 ok$/m);
      const [mail] = await smtp.waitFor(1);
      assert.ok(mail);
      assert.match(JSON.stringify(mail), /ops@gatehouse\.test/);
    });

    it('a PUBLIC_URL nothing answers at: the fail line says the service answers locally and to fix PUBLIC_URL, exit 1', async () => {
      const wrong = `http://localhost:${await freePort()}`;
      const res = await doctor({ ...env, PUBLIC_URL: wrong });
      assert.equal(res.code, 1, res.stdout);
      assert.equal(
        lineOf(res.stdout, 'public-url'),
        `fail  public-url   ${wrong}/health does not answer (ECONNREFUSED), but the service answers on 127.0.0.1:${env.PORT}. Fix: set PUBLIC_URL to the address clients use to reach this service (or fix the proxy or DNS in front of it)`,
      );
      assert.match(res.stdout, /^1 failed, /m);
    });

    it('a PUBLIC_URL that reaches a service configured with another one: fail, the issuer named', async () => {
      const other = `http://127.0.0.1:${env.PORT}`;
      const res = await doctor({ ...env, PUBLIC_URL: other });
      assert.equal(res.code, 1, res.stdout);
      assert.match(
        lineOf(res.stdout, 'public-url'),
        new RegExp(
          `^fail  public-url   ${other} answers, but not as this configuration: its issuer is ${env.PUBLIC_URL}\\. Fix: `,
        ),
      );
    });

    it('an SMTP server that does not answer: fail line with the fix, exit 1', async () => {
      const res = await doctor({ ...env, SMTP_URL: `smtp://127.0.0.1:${await freePort()}` });
      assert.equal(res.code, 1, res.stdout);
      assert.match(
        lineOf(res.stdout, 'smtp'),
        /^fail {2}smtp +smtp:\/\/127\.0\.0\.1:\d+ refused or did not answer: .*\. Fix: check SMTP_URL/,
      );
    });

    it('the identity provider: its discovery document answers (ok), an issuer that publishes none fails with the fix', async () => {
      const op = await startOidcProvider();
      try {
        const idp = { OIDC_ISSUER: op.issuer, OIDC_CLIENT_ID: op.clientId };
        const good = await doctor({ ...env, ...idp });
        assert.equal(good.code, 0, good.stdout);
        assert.equal(
          lineOf(good.stdout, 'idp'),
          `ok    idp          ${op.issuer} publishes its discovery document`,
        );
        const wrong = `${op.issuer}/elsewhere`;
        const bad = await doctor({ ...env, ...idp, OIDC_ISSUER: wrong });
        assert.equal(bad.code, 1, bad.stdout);
        assert.equal(
          lineOf(bad.stdout, 'idp'),
          `fail  idp          ${wrong}/.well-known/openid-configuration does not answer (HTTP 404). Fix: check OIDC_ISSUER (the exact issuer URL the provider publishes) and that this machine can reach it`,
        );
      } finally {
        await op.stop();
      }
    });

    it('passkeys bound to another domain fail while mfa is on; TRUST_PROXY=true on every interface warns', async () => {
      const res = await doctor({
        ...env,
        WEBAUTHN_RP_ID: 'example.test',
        WEBAUTHN_ORIGINS: 'https://example.test',
        TRUST_PROXY: 'true',
        HOST: '0.0.0.0',
      });
      assert.equal(res.code, 1, res.stdout);
      assert.equal(
        lineOf(res.stdout, 'passkeys'),
        `fail  passkeys     WEBAUTHN_RP_ID example.test is not PUBLIC_URL's host localhost nor a parent domain of it (and 1 more). Fix: set WEBAUTHN_RP_ID=localhost (or a parent domain of it), or leave it unset`,
      );
      assert.match(
        lineOf(res.stdout, 'proxy'),
        /^warn {2}proxy {8}TRUST_PROXY=true believes X-Forwarded-For from anyone .*\. Fix: list the proxies/,
      );
    });

    it('pending migrations: fail with "run gatehouse migrate", and the doctor applies none itself', async () => {
      const older = await createTestDatabase(dialect);
      const names = Object.keys(migrations);
      const opened = openDatabase(older.url);
      try {
        const migrator = new Migrator({
          db: opened.db,
          provider: { getMigrations: async () => migrations },
          migrationTableName: 'gatehouse_migrations',
          migrationLockTableName: 'gatehouse_migrations_lock',
        });
        const { error } = await migrator.migrateTo(names[names.length - 2] ?? '');
        assert.equal(error, undefined);
        const res = await doctor({ ...env, DATABASE_URL: older.url });
        assert.equal(res.code, 1, res.stdout);
        assert.match(
          lineOf(res.stdout, 'database'),
          new RegExp(
            `^fail  database     \\S+: 1 migration\\(s\\) pending \\(${names.at(-1)}\\)\\. Fix: run gatehouse migrate \\(the service also migrates when it starts\\); back the database up first$`,
          ),
        );
        const still = await migrator.getMigrations();
        assert.equal(still.filter((m) => m.executedAt === undefined).length, 1, 'the doctor migrated');
      } finally {
        await opened.close();
        await older.drop();
      }
    });

    it('a SECRETS_KEY that does not open the stored second-factor secrets: fail, exit 1', async () => {
      const t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      try {
        const { token } = await userWithSession(t);
        await enableTotp(t, token);
        const res = await doctor({
          ...env,
          DATABASE_URL: t.databaseUrl,
          SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
        });
        assert.equal(res.code, 1, res.stdout);
        assert.equal(
          lineOf(res.stdout, 'secrets-key'),
          'fail  secrets-key  SECRETS_KEY does not open the stored second-factor secrets (another key sealed them). Fix: set SECRETS_KEY to the key the secrets were sealed with (the same on every instance)',
        );
        const right = await doctor({ ...env, DATABASE_URL: t.databaseUrl });
        assert.equal(
          lineOf(right.stdout, 'secrets-key'),
          'ok    secrets-key  set and opens the stored second-factor secrets',
        );
      } finally {
        await t.destroy();
      }
    });
  });
}
