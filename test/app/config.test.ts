import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig, readEnvironment } from '../../src/platform/config.ts';
import { type EntryResult, runEntry } from '../helpers/cli.ts';

/** Each entry: an environment that must be refused, and the variable the one-line message must name. */
const BAD: Array<[Record<string, string>, string]> = [
  [{ PORT: 'abc' }, 'PORT'],
  [{ PORT: '70000' }, 'PORT'],
  [{ PORT: '-1' }, 'PORT'],
  [{ PORT: '30.5' }, 'PORT'],
  [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
  [{ DATABASE_URL: 'sqlite:' }, 'DATABASE_URL'],
  [{ DATABASE_URL: './data/gatehouse.db' }, 'DATABASE_URL'],
  [{ DATABASE_POOL_MAX: '0' }, 'DATABASE_POOL_MAX'],
  [{ DATABASE_STATEMENT_TIMEOUT_MS: 'soon' }, 'DATABASE_STATEMENT_TIMEOUT_MS'],
  [{ API_FORM: 'C' }, 'API_FORM'],
  [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
  [{ PUBLIC_URL: 'ftp://example.com' }, 'PUBLIC_URL'],
  [{ ADMIN_EMAIL: 'root@example.com' }, 'ADMIN_PASSWORD'],
  [{ ADMIN_PASSWORD: 'a long enough password' }, 'ADMIN_EMAIL'],
  [{ ADMIN_EMAIL: 'not-an-email', ADMIN_PASSWORD: 'a long enough password' }, 'ADMIN_EMAIL'],
  [{ ACCESS_TOKEN_TTL_S: '0' }, 'ACCESS_TOKEN_TTL_S'],
  [{ ACCESS_TOKEN_TTL_S: '15m' }, 'ACCESS_TOKEN_TTL_S'],
  [{ ACCESS_TOKEN_ALG: 'HS256' }, 'ACCESS_TOKEN_ALG'],
  [{ ACCESS_TOKEN_ALG: 'es256' }, 'ACCESS_TOKEN_ALG'],
  [{ ACCESS_TOKEN_ALG: 'none' }, 'ACCESS_TOKEN_ALG'],
  [{ REFRESH_TOKEN_TTL_S: '1.5' }, 'REFRESH_TOKEN_TTL_S'],
  [{ REFRESH_REUSE_GRACE_S: 'ten' }, 'REFRESH_REUSE_GRACE_S'],
  [{ INVITATION_TTL_S: '-5' }, 'INVITATION_TTL_S'],
  [{ INVITE_URL_TEMPLATE: 'https://app.example.com/invite' }, 'INVITE_URL_TEMPLATE'],
  [{ RESET_URL_TEMPLATE: 'https://app.example.com/reset' }, 'RESET_URL_TEMPLATE'],
  [{ RESET_URL_TEMPLATE: 'javascript:alert({token})' }, 'RESET_URL_TEMPLATE'],
  [{ VERIFY_EMAIL_URL_TEMPLATE: 'https://app.example.com/verify' }, 'VERIFY_EMAIL_URL_TEMPLATE'],
  [{ PASSWORD_RESET_TTL_S: '0' }, 'PASSWORD_RESET_TTL_S'],
  [{ EMAIL_LINK_TTL_S: 'a day' }, 'EMAIL_LINK_TTL_S'],
  [{ REQUIRE_VERIFIED_EMAIL: 'maybe' }, 'REQUIRE_VERIFIED_EMAIL'],
  [{ APP_NAME: 'Acme\u0007ID' }, 'APP_NAME'],
  [{ PASSWORD_MIN_LENGTH: '4' }, 'PASSWORD_MIN_LENGTH'],
  [{ LOGIN_FAILURES_PER_ADDRESS_PER_MIN: '0' }, 'LOGIN_FAILURES_PER_ADDRESS_PER_MIN'],
  [{ OIDC_ISSUER: 'https://id.example.com' }, 'OIDC_CLIENT_ID'],
  [{ OIDC_CLIENT_ID: 'gatehouse' }, 'OIDC_ISSUER'],
  [{ OIDC_ISSUER: 'id.example.com', OIDC_CLIENT_ID: 'gatehouse' }, 'OIDC_ISSUER'],
  [{ OIDC_ALLOWED_ALGS: 'none' }, 'OIDC_ALLOWED_ALGS'],
  [{ OIDC_ALLOWED_ALGS: 'RS256,HS256' }, 'OIDC_ALLOWED_ALGS'],
  [{ OIDC_ALLOWED_ALGS: ',' }, 'OIDC_ALLOWED_ALGS'],
  [{ OIDC_AUTO_PROVISION: 'maybe' }, 'OIDC_AUTO_PROVISION'],
  [{ OIDC_LINK_BY_EMAIL: '2' }, 'OIDC_LINK_BY_EMAIL'],
  [{ SMTP_URL: 'http://mail.example.com' }, 'SMTP_URL'],
  [{ MAIL_FROM: 'nobody' }, 'MAIL_FROM'],
  [{ CORS_ORIGINS: '*' }, 'CORS_ORIGINS'],
  [{ CORS_ORIGINS: 'https://app.example.com,javascript:alert(1)' }, 'CORS_ORIGINS'],
  [{ CORS_ORIGINS: 'https://app.example.com/login' }, 'CORS_ORIGINS'],
  [{ TRUST_PROXY: 'sometimes' }, 'TRUST_PROXY'],
  [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
  [
    { DATABASE_URL: 'postgres://db.internal/gatehouse', DATABASE_LISTEN_URL: 'redis://x' },
    'DATABASE_LISTEN_URL',
  ],
  [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
  [{ AUDIT_RETENTION_DAYS: '0' }, 'AUDIT_RETENTION_DAYS'],
  [{ PASSWORD_HASH_CONCURRENCY: '0' }, 'PASSWORD_HASH_CONCURRENCY'],
  [{ PASSWORD_HASH_QUEUE: '-1' }, 'PASSWORD_HASH_QUEUE'],
  [{ OIDC_CACHE_TTL_S: '0' }, 'OIDC_CACHE_TTL_S'],
  [{ OIDC_JWKS_COOLDOWN_S: 'often' }, 'OIDC_JWKS_COOLDOWN_S'],
  [{ OIDC_HTTP_TIMEOUT_MS: '10' }, 'OIDC_HTTP_TIMEOUT_MS'],
];

describe('configuration', () => {
  it('has the defaults of docs/api.md §10 and is frozen', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.databaseUrl, 'sqlite:./data/gatehouse.db');
    assert.equal(config.apiForm, 'A');
    assert.equal(config.publicUrl, 'http://localhost:3000');
    assert.equal(config.adminEmail, null);
    assert.equal(config.adminPassword, null);
    assert.equal(config.accessTokenTtlS, 900);
    assert.equal(config.accessTokenAlg, 'ES256');
    assert.equal(config.accessTokenClientId, config.publicUrl);
    assert.equal(config.refreshTokenTtlS, 2_592_000);
    assert.equal(config.refreshReuseGraceS, 10);
    assert.equal(config.invitationTtlS, 604_800);
    assert.equal(config.inviteUrlTemplate, 'http://localhost:3000/account/invitation/{token}');
    assert.equal(config.resetUrlTemplate, 'http://localhost:3000/account/reset-password/{token}');
    assert.equal(config.verifyEmailUrlTemplate, 'http://localhost:3000/account/verify-email/{token}');
    assert.equal(config.passwordResetTtlS, 1800);
    assert.equal(config.emailLinkTtlS, 86_400);
    assert.equal(config.requireVerifiedEmail, false);
    assert.equal(config.appName, 'Gatehouse');
    assert.equal(config.passwordMinLength, 15);
    assert.equal(config.loginFailuresPerAddressPerMin, 30);
    assert.equal(config.oidc.issuer, null);
    assert.equal(config.oidc.clientId, null);
    assert.deepEqual(config.oidc.allowedAlgs, ['RS256', 'ES256', 'EdDSA', 'PS256']);
    assert.equal(config.oidc.autoProvision, true);
    assert.equal(config.oidc.linkByEmail, true);
    assert.equal(config.smtpUrl, null);
    assert.deepEqual(config.corsOrigins, []);
    assert.equal(config.trustProxy, false);
    assert.equal(config.logLevel, 'info');
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.oidc));
    assert.ok(Object.isFrozen(config.corsOrigins));
    assert.throws(() => {
      (config as { port: number }).port = 1;
    }, TypeError);
  });

  it('reads every variable it documents', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://gatehouse@db.internal:5432/gatehouse',
      API_FORM: 'b',
      PUBLIC_URL: 'https://id.example.com/',
      ADMIN_EMAIL: 'root@example.com',
      ADMIN_PASSWORD: 'a long enough password',
      ACCESS_TOKEN_TTL_S: '600',
      ACCESS_TOKEN_ALG: 'RS256',
      ACCESS_TOKEN_CLIENT_ID: 'gatehouse-web',
      REFRESH_TOKEN_TTL_S: '86400',
      REFRESH_REUSE_GRACE_S: '0',
      INVITATION_TTL_S: '3600',
      PASSWORD_MIN_LENGTH: '20',
      LOGIN_FAILURES_PER_ADDRESS_PER_MIN: '5',
      OIDC_ISSUER: 'https://login.example.com/',
      OIDC_CLIENT_ID: 'gatehouse',
      OIDC_ALLOWED_ALGS: 'ES256, EdDSA',
      OIDC_AUTO_PROVISION: 'false',
      OIDC_LINK_BY_EMAIL: 'no',
      SMTP_URL: 'smtp://mailer:secret@mail.example.com:587',
      MAIL_FROM: 'Gatehouse <id@example.com>',
      CORS_ORIGINS: 'https://app.example.com, https://Admin.Example.com/, http://localhost:5173',
      TRUST_PROXY: 'true',
      LOG_LEVEL: 'WARN',
      DATABASE_POOL_MAX: '25',
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
      METRICS_TOKEN: 'scrape-me-please',
      AUDIT_RETENTION_DAYS: '30',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.apiForm, 'B');
    // The trailing slash goes, so links never hold `//`.
    assert.equal(config.publicUrl, 'https://id.example.com');
    assert.equal(config.inviteUrlTemplate, 'https://id.example.com/account/invitation/{token}');
    assert.equal(config.adminEmail, 'root@example.com');
    assert.equal(config.passwordMinLength, 20);
    // The issuer is kept exactly: `iss` is compared byte for byte.
    assert.equal(config.oidc.issuer, 'https://login.example.com/');
    assert.deepEqual(config.oidc.allowedAlgs, ['ES256', 'EdDSA']);
    assert.equal(config.oidc.autoProvision, false);
    assert.equal(config.oidc.linkByEmail, false);
    // Stored as browsers send Origin: lower-case host, no trailing slash.
    assert.deepEqual(config.corsOrigins, [
      'https://app.example.com',
      'https://admin.example.com',
      'http://localhost:5173',
    ]);
    assert.equal(config.trustProxy, true);
    assert.equal(config.logLevel, 'warn');
    assert.equal(config.databasePoolMax, 25);
    assert.equal(config.databaseStatementTimeoutMs, 0);
    assert.equal(config.metricsToken, 'scrape-me-please');
    assert.equal(config.auditRetentionDays, 30);
    assert.equal(config.accessTokenAlg, 'RS256');
    assert.equal(config.accessTokenClientId, 'gatehouse-web');
  });

  it('keeps ADMIN_PASSWORD exactly as given (no trimming)', () => {
    const config = loadConfig({ ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: '  spaced password  ' });
    assert.equal(config.adminPassword, '  spaced password  ');
  });

  for (const [env, variable] of BAD) {
    it(`refuses ${JSON.stringify(env)} naming ${variable} in one line`, () => {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
          assert.match(err.message, new RegExp(`\\b${variable}\\b`));
          assert.doesNotMatch(err.message, /\n/);
          return true;
        },
      );
    });
  }

  it('regression: a start named only the first wrong setting, so each fix took another failed start', () => {
    assert.throws(
      () => loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', REQUIRE_MFA: 'sometimes', TRUST_PROXY: 'nope' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
        // Every wrong setting, one a line, in the fixed checking order.
        assert.deepEqual(err.message.split('\n'), [
          'PORT must be a whole number, got "eighty"',
          'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
          'REQUIRE_MFA must be off, admins or all, got "sometimes"',
          'TRUST_PROXY must be true, false or a comma list of proxy addresses/CIDRs (or loopback, linklocal, uniquelocal); "nope" is none of these',
        ]);
        return true;
      },
    );
  });

  it('never repeats a password from a URL in its message', () => {
    for (const env of [
      { SMTP_URL: 'smtp://mailer:hunter2-secret@mail.example.com:notaport' },
      { DATABASE_URL: 'mysql://app:hunter2-secret@db/x' },
    ]) {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && !err.message.includes('hunter2-secret'),
      );
    }
  });

  it('reads ./.env under the real environment, which wins', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-env-'));
    try {
      writeFileSync(join(dir, '.env'), 'PORT=4000\nAPI_FORM=B\n# a comment\nLOG_LEVEL=debug\n');
      const config = loadConfig(readEnvironment(dir, { LOG_LEVEL: 'error' }));
      assert.equal(config.port, 4000);
      assert.equal(config.apiForm, 'B');
      assert.equal(config.logLevel, 'error');
      // No .env: the environment alone.
      assert.deepEqual(readEnvironment(join(dir, 'missing'), { PORT: '1' }), { PORT: '1' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function assertOneLine(result: EntryResult, pattern: RegExp): void {
  assert.notEqual(result.code, 0, 'the process must exit non-zero');
  const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace');
}

// A port in use and an unreachable database are not configuration errors: test/app/start-failures.test.ts.
describe('configuration errors stop the process with one line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-proc-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const db = `sqlite:${join(dir, 'never.db')}`;

  it('node src/main.ts with a bad PORT', async () => {
    const result = await runEntry('src/main.ts', [], { PORT: 'eighty', DATABASE_URL: db });
    assertOneLine(result, /PORT must be a whole number/);
    assert.equal(result.stdout, '');
  });

  it('node src/main.ts with two bad settings names both in one start, one line each', async () => {
    const result = await runEntry('src/main.ts', [], {
      PORT: 'eighty',
      API_FORM: 'Z',
      ADMIN_EMAIL: 'root@example.com',
      DATABASE_URL: db,
    });
    assert.equal(result.code, 1);
    assert.deepEqual(result.stderr.trim().split('\n'), [
      'gatehouse: configuration error: PORT must be a whole number, got "eighty"',
      'gatehouse: configuration error: API_FORM must be A, B or full, got "Z"',
      'gatehouse: configuration error: ADMIN_EMAIL and ADMIN_PASSWORD must be set together',
    ]);
    assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace');
    assert.equal(result.stdout, '');
    assert.equal(existsSync(join(dir, 'never.db')), false, 'nothing was created');
  });

  it('node src/main.ts with a bad value in ./.env', async () => {
    const cwd = join(dir, 'with-env');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(cwd);
    writeFileSync(join(cwd, '.env'), `API_FORM=Z\nDATABASE_URL=${db}\n`);
    const result = await runEntry('src/main.ts', [], {}, cwd);
    assertOneLine(result, /API_FORM must be A, B or full/);
  });

  it('node src/cli.ts migrate with a bad DATABASE_URL', async () => {
    const result = await runEntry('src/cli.ts', ['migrate'], { DATABASE_URL: 'mongodb://localhost/x' });
    assertOneLine(result, /DATABASE_URL/);
  });

  it('a weak ADMIN_PASSWORD on a database without an admin is one line', async () => {
    const result = await runEntry('src/main.ts', [], {
      DATABASE_URL: `sqlite:${join(dir, 'weak-admin.db')}`,
      ADMIN_EMAIL: 'root@example.com',
      ADMIN_PASSWORD: 'password123',
      LOG_LEVEL: 'silent',
    });
    assertOneLine(result, /ADMIN_PASSWORD is refused: Password must be at least 15 characters long/);
  });

  it('an SQLite path that cannot be created is one line', async () => {
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a folder');
    const result = await runEntry('src/main.ts', [], {
      DATABASE_URL: `sqlite:${join(blocker, 'sub', 'x.db')}`,
    });
    assertOneLine(result, /^gatehouse: /);
  });
});
