import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, type TestDatabase, type TestDialect } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';
import {
  caller,
  enableTotp,
  loginMfa,
  PASSWORD,
  passwordStep,
  registerPasskey,
  totpCode,
  userWithSession,
} from '../mfa/helpers.ts';
import type { SoftCredential } from '../support/webauthn-authenticator.ts';

// docs/operations.md, "Backups": a backup restored into a fresh database signs in every factor made
// before it (SQLite: `gatehouse backup`; PostgreSQL: pg_dump and pg_restore, as documented there).

const run = promisify(execFile);
const ENV = { API_FORM: 'full' };

interface Made {
  totpEmail: string;
  secret: string;
  credential: SoftCredential;
  passkeyUserId: string;
  laterEmail: string;
}

/** Makes, on a running app, a password account (the first admin), a TOTP user and a passkey user. */
async function makeFactors(t: TestApp): Promise<Omit<Made, 'laterEmail'>> {
  const totpUser = await userWithSession(t, 'totp@gatehouse.test');
  const { secret } = await enableTotp(t, totpUser.token);
  const passkeyUser = await userWithSession(t, 'passkey@gatehouse.test');
  const { credential } = await registerPasskey(t, passkeyUser.token);
  return { totpEmail: totpUser.user.email, secret, credential, passkeyUserId: passkeyUser.user.id };
}

/** On the restored app: password, password + TOTP through /login/mfa, and a discoverable passkey. */
async function signInEveryWay(restored: TestApp, made: Made): Promise<void> {
  const password = await restored.app.inject({
    method: 'POST',
    url: '/api/v1/login',
    payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  });
  assert.equal(password.statusCode, 200, password.body);

  const totpUser = await restored.ctx.db
    .selectFrom('users')
    .selectAll()
    .where('email', '=', made.totpEmail)
    .executeTakeFirstOrThrow();
  const step = await passwordStep(restored, totpUser);
  // The next step's code: the current one may have been spent confirming the enrolment (replay guard).
  const mfa = await loginMfa(restored, step.mfa_token, totpCode(made.secret, 1));
  assert.equal(mfa.statusCode, 200, mfa.body);

  const options = await caller(restored)('POST', '/api/v1/passkeys/authentication/options', {});
  assert.equal(options.statusCode, 200, options.body);
  const ceremony = json<{ challenge_id: string; options: { challenge: string } }>(options);
  const response = made.credential.assert(
    { challenge: ceremony.options.challenge, rpId: new URL(PUBLIC_URL).hostname },
    PUBLIC_URL,
  );
  const passkey = await caller(restored)('POST', '/api/v1/login/passkey', {
    challenge_id: ceremony.challenge_id,
    response,
  });
  assert.equal(passkey.statusCode, 200, passkey.body);
  assert.equal(json<{ user: { id: string } }>(passkey).user.id, made.passkeyUserId);

  const later = await restored.ctx.db
    .selectFrom('users')
    .select('id')
    .where('email', '=', made.laterEmail)
    .executeTakeFirst();
  assert.equal(later, undefined, 'a user created after the backup is in it');
}

/** Takes a backup of `t`'s database into `dir`; returns a fresh database restored from it. */
async function backupAndRestore(dialect: TestDialect, t: TestApp, dir: string): Promise<TestDatabase> {
  mkdirSync(dir);
  if (dialect === 'sqlite') {
    const file = join(dir, 'backup.db');
    const made = await runCli(['backup', file], t.databaseUrl);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /^backed up to .*backup\.db \(\d+ bytes, \d+ migrations applied\)/);
    assert.equal(statSync(file).mode & 0o777, 0o600, 'a backup holds secrets: owner only');
    // One self-contained file: no -wal or -shm belongs with it, and no partial copy is left behind.
    assert.deepEqual(readdirSync(dir), ['backup.db']);
    // Another folder, as on a new machine.
    const restoredPath = join(dir, 'restored', 'gatehouse.db');
    mkdirSync(join(dir, 'restored'));
    copyFileSync(file, restoredPath);
    return { url: `sqlite:${restoredPath}`, drop: async () => {} };
  }
  const file = join(dir, 'backup.dump');
  await run('pg_dump', ['--format=custom', '--file', file, t.databaseUrl]);
  const fresh = await createTestDatabase('postgres');
  await run('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', fresh.url, file]);
  return fresh;
}

for (const dialect of DIALECTS) {
  describe(`backup and restore [${dialect}]`, () => {
    let t: TestApp;
    let dir: string;
    before(async () => {
      t = await buildTestApp(dialect, { env: ENV });
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-backup-'));
    });
    after(async () => {
      await t.destroy();
      rmSync(dir, { recursive: true, force: true });
    });

    it('a backup taken while the service runs restores into a fresh database: password, TOTP and passkey sign in', async () => {
      const factors = await makeFactors(t);
      const database = await backupAndRestore(dialect, t, join(dir, 'round-trip'));
      // Written after the backup: the copy is the snapshot of the moment it was taken.
      const laterEmail = 'later@gatehouse.test';
      await createUser(t, { email: laterEmail, password: PASSWORD });
      const restored = await buildTestApp(dialect, { database, env: ENV });
      try {
        await signInEveryWay(restored, { ...factors, laterEmail });
      } finally {
        await restored.destroy();
      }
    });

    if (dialect === 'sqlite') {
      it('refuses to overwrite a file unless --force; one-line errors for a missing database and a folder that does not exist', async () => {
        const file = join(dir, 'taken.db');
        writeFileSync(file, 'keep me');
        const refused = await runCli(['backup', file], t.databaseUrl);
        assert.equal(refused.code, 1);
        assert.equal(
          refused.stderr,
          `gatehouse: backup failed: ${file} already exists; choose a new name or pass --force to replace it\n`,
        );
        assert.equal(readFileSync(file, 'utf8'), 'keep me');
        const forced = await runCli(['backup', '--force', file], t.databaseUrl);
        assert.doesNotMatch(forced.stdout, /secrets key/, 'SECRETS_KEY is set: there is no key file to copy');
        assert.equal(forced.code, 0, forced.stderr);
        assert.ok(statSync(file).size > 4096);

        // Without SECRETS_KEY the key generated beside the database goes with the copy (docs/mfa.md).
        const keyFile = `${t.databaseUrl.slice('sqlite:'.length)}.secrets-key`;
        writeFileSync(keyFile, `${Buffer.alloc(32, 3).toString('base64')}\n`, { mode: 0o600 });
        try {
          const withKey = await runCli(['backup', join(dir, 'with-key.db')], t.databaseUrl);
          assert.equal(withKey.code, 0, withKey.stderr);
          assert.match(
            withKey.stdout,
            /and the generated secrets key to .*with-key\.db\.secrets-key \(restore both together\)/,
          );
          assert.equal(
            readFileSync(join(dir, 'with-key.db.secrets-key'), 'utf8'),
            readFileSync(keyFile, 'utf8'),
          );
          assert.equal(statSync(join(dir, 'with-key.db.secrets-key')).mode & 0o777, 0o600);
        } finally {
          rmSync(keyFile);
        }

        const missing = await runCli(['backup', join(dir, 'x.db')], `sqlite:${join(dir, 'none.db')}`);
        assert.equal(missing.code, 1);
        assert.equal(
          missing.stderr,
          `gatehouse: backup failed: no database file at ${join(dir, 'none.db')}\n`,
        );
        assert.ok(!existsSync(join(dir, 'none.db')), 'the backup created the database it did not find');
        const noFolder = await runCli(['backup', join(dir, 'no', 'x.db')], t.databaseUrl);
        assert.equal(noFolder.code, 1);
        assert.equal(
          noFolder.stderr,
          `gatehouse: backup failed: the folder ${join(dir, 'no')} does not exist\n`,
        );
      });
    } else {
      it('on a PostgreSQL URL says to use pg_dump, in one line, and writes nothing', async () => {
        const file = join(dir, 'pg.db');
        const res = await runCli(['backup', file], t.databaseUrl);
        assert.equal(res.code, 1);
        assert.match(
          res.stderr,
          /^gatehouse: backup copies SQLite databases; for PostgreSQL run pg_dump .*\n$/,
        );
        assert.ok(!existsSync(file));
      });
    }
  });
}
