import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { buildTestApp, json } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS } from '../helpers/databases.ts';
import { firstAdmin, sessionFor } from '../helpers/users.ts';
import { caller, enableTotp, loginMfa, passwordStep, totpCode, userWithSession } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs src/main.ts until it exits; resolves with its exit code and stderr. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'src/main.ts')], {
      cwd: mkdtempSync(join(tmpdir(), 'gatehouse-proc-')),
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', PORT: '0', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('second-factor settings', () => {
  it('SECRETS_KEY must be 32 bytes of base64; WEBAUTHN_ORIGINS must be on the RP ID', () => {
    assert.throws(
      () => loadConfig({ SECRETS_KEY: 'c2hvcnQ=' }),
      (e: unknown) => e instanceof ConfigError && /SECRETS_KEY/.test(e.message),
    );
    assert.throws(
      () => loadConfig({ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://example.org' }),
      (e: unknown) => e instanceof ConfigError && /WEBAUTHN_ORIGINS/.test(e.message),
    );
    const ok = loadConfig({
      PUBLIC_URL: 'https://id.example.com/',
      WEBAUTHN_ORIGINS: 'https://app.id.example.com',
    });
    assert.equal(ok.webauthn.rpId, 'id.example.com');
    assert.deepEqual(ok.webauthn.origins, ['https://app.id.example.com']);
    assert.deepEqual(loadConfig({ PUBLIC_URL: 'http://localhost:3000' }).webauthn.origins, [
      'http://localhost:3000',
    ]);
  });

  it('a start that would enable passkeys with an IP address as RP ID stops with one line naming WEBAUTHN_RP_ID', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-rpid-'));
    try {
      const result = await runMain({
        API_FORM: 'full',
        PUBLIC_URL: 'http://127.0.0.1:3000',
        DATABASE_URL: `sqlite:${join(dir, 'g.db')}`,
        SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
      });
      assert.notEqual(result.code, 0);
      const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(
        lines[0] as string,
        /^gatehouse: configuration error: WEBAUTHN_RP_ID must be a domain name/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`module availability [${dialect}]`, () => {
    it('enabling passkeys at run time with an IP RP ID answers 409 module_unavailable', async () => {
      const t = await buildTestApp(dialect, { env: { PUBLIC_URL: 'http://127.0.0.1:3000' } });
      try {
        const admin = (await sessionFor(t, await firstAdmin(t))).access_token;
        const res = await caller(t, admin)('PUT', '/api/v1/admin/modules/passkeys', { enabled: true });
        assert.equal(res.statusCode, 409);
        assert.equal(json(res).code, 'module_unavailable');
        assert.match(String(json(res).detail), /WEBAUTHN_RP_ID/);
        const mfa = await caller(t, admin)('PUT', '/api/v1/admin/modules/mfa', { enabled: true });
        assert.equal(mfa.statusCode, 200, 'mfa has its key');
      } finally {
        await t.destroy();
      }
    });

    // Hole: while passkeys was off, a passkey at POST /login/mfa counted as a wrong factor (401
    // passkey_invalid, a try of the mfa_token and an attempt on the throttle spent) where every other
    // passkey path answers 404 module_disabled.
    it('passkeys off: a passkey at login/mfa answers 404 module_disabled and spends no try', async () => {
      const t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      try {
        const admin = (await sessionFor(t, await firstAdmin(t))).access_token;
        const { user, token } = await userWithSession(t);
        const { secret } = await enableTotp(t, token);
        const off = await caller(t, admin)('PUT', '/api/v1/admin/modules/passkeys', { enabled: false });
        assert.equal(off.statusCode, 200, off.body);
        const step = await passwordStep(t, user);
        assert.deepEqual(step.methods, ['totp', 'recovery_code']);
        const proof = { challenge_id: '00000000-0000-7000-8000-000000000000', response: { id: 'x' } };
        for (let i = 0; i < 6; i++) {
          const res = await caller(t)('POST', '/api/v1/login/mfa', {
            mfa_token: step.mfa_token,
            passkey: proof,
          });
          assert.equal(res.statusCode, 404, res.body);
          assert.equal(json(res).code, 'module_disabled');
        }
        // Six refusals and the token (5 tries) still signs in with a code.
        const res = await loginMfa(t, step.mfa_token, totpCode(secret, 1));
        assert.equal(res.statusCode, 200, res.body);
      } finally {
        await t.destroy();
      }
    });
  });
}

if (DIALECTS.includes('postgres')) {
  describe('PostgreSQL without SECRETS_KEY', () => {
    it('API_FORM=full does not start: one ConfigError naming SECRETS_KEY', async () => {
      const database = await createTestDatabase('postgres');
      try {
        await assert.rejects(
          buildTestApp('postgres', { database, env: { API_FORM: 'full', SECRETS_KEY: '' } }),
          (e: unknown) =>
            e instanceof ConfigError &&
            /^SECRETS_KEY must be set to enable the mfa module on PostgreSQL/.test(e.message),
        );
      } finally {
        await database.drop();
      }
    });

    it('form A starts, and enabling mfa at run time answers 409 module_unavailable', async () => {
      const t = await buildTestApp('postgres', { env: { SECRETS_KEY: '' } });
      try {
        const admin = (await sessionFor(t, await firstAdmin(t))).access_token;
        const res = await caller(t, admin)('PUT', '/api/v1/admin/modules/mfa', { enabled: true });
        assert.equal(res.statusCode, 409);
        assert.equal(json(res).code, 'module_unavailable');
        assert.match(String(json(res).detail), /SECRETS_KEY/);
        const sessions = await caller(t, admin)('PUT', '/api/v1/admin/modules/sessions', { enabled: true });
        assert.equal(sessions.statusCode, 200);
      } finally {
        await t.destroy();
      }
    });
  });
}

describe('SQLite without SECRETS_KEY', () => {
  const cleanup: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanup) await c();
  });

  it('generates a key file beside the database (0600) and keeps using it after a restart', async () => {
    const database = await createTestDatabase('sqlite');
    cleanup.push(() => database.drop());
    const t = await buildTestApp('sqlite', { database, env: { API_FORM: 'full', SECRETS_KEY: '' } });
    const file = `${database.url.slice('sqlite:'.length)}.secrets-key`;
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const { user, token } = await userWithSession(t);
    const { secret } = await enableTotp(t, token);
    await t.close();
    const again = await t.restart();
    try {
      const step = await passwordStep(again, user);
      const res = await loginMfa(again, step.mfa_token, totpCode(secret, 1));
      assert.equal(res.statusCode, 200, res.body);
    } finally {
      await again.close();
    }
  });
});
