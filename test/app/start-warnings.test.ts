import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { settingNames, unknownSettings } from '../../src/platform/config/names.ts';
import { buildTestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { freePort } from '../support/service-process.ts';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** The `msg` of every warning among JSON log lines. */
function warnings(lines: readonly string[]): string[] {
  return lines
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => l.level === 40)
    .map((l) => l.msg);
}

/**
 * Starts `node src/main.ts` in `cwd` (where a `.env` may be), waits for the ready line, stops it with
 * SIGTERM; resolves with its JSON log lines.
 */
function startAndStop(cwd: string, env: Record<string, string>): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN], {
      cwd,
      env: { PATH: process.env.PATH ?? '', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      if (out.includes('Gatehouse is ready at')) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`exit ${code}: ${err}${out}`));
      else resolve(out.split('\n').filter((l) => l.startsWith('{')));
    });
  });
}

// docs/configuration.md, "Warnings at start": each is logged once, never per request.
describe('warnings where a silent default hurts', () => {
  for (const dialect of DIALECTS) {
    it(`[${dialect}] X-Forwarded-For while TRUST_PROXY=false: one warning that names the site-wide lock-out`, async () => {
      const lines: string[] = [];
      const t = await buildTestApp(dialect, {
        env: { LOG_LEVEL: 'warn', SMTP_URL: 'smtp://127.0.0.1:1' },
        logLines: lines,
      });
      try {
        for (let i = 0; i < 3; i++) {
          const res = await t.app.inject({
            url: '/health',
            headers: { 'x-forwarded-for': `203.0.113.${i}` },
          });
          assert.equal(res.statusCode, 200);
        }
        const found = warnings(lines).filter((m) => m.includes('X-Forwarded-For'));
        assert.equal(found.length, 1, lines.join('\n'));
        assert.match(found[0] ?? '', /TRUST_PROXY is false/);
        assert.match(found[0] ?? '', /30 failed sign-ins a minute from anyone .* lock the whole site out/);
      } finally {
        await t.destroy();
      }
      const trusted: string[] = [];
      const behind = await buildTestApp(dialect, {
        env: { LOG_LEVEL: 'warn', TRUST_PROXY: 'loopback' },
        logLines: trusted,
      });
      try {
        await behind.app.inject({ url: '/health', headers: { 'x-forwarded-for': '203.0.113.9' } });
        assert.deepEqual(
          warnings(trusted).filter((m) => m.includes('X-Forwarded-For')),
          [],
          'TRUST_PROXY set: nothing to warn about',
        );
      } finally {
        await behind.destroy();
      }
    });

    it(`[${dialect}] mail going to the log: one warning at start naming SMTP_URL; none with SMTP_URL`, async () => {
      const lines: string[] = [];
      const t = await buildTestApp(dialect, { env: { LOG_LEVEL: 'warn' }, logLines: lines });
      try {
        await t.app.inject({ url: '/health' });
        const found = warnings(lines).filter((m) => m.startsWith('SMTP_URL is not set'));
        assert.equal(found.length, 1, lines.join('\n'));
        assert.match(found[0] ?? '', /goes to this log, not to anyone/);
      } finally {
        await t.destroy();
      }
      const configured: string[] = [];
      const smtp = await buildTestApp(dialect, {
        env: { LOG_LEVEL: 'warn', SMTP_URL: 'smtp://127.0.0.1:1' },
        logLines: configured,
      });
      await smtp.destroy();
      assert.deepEqual(
        warnings(configured).filter((m) => m.includes('SMTP_URL')),
        [],
      );
    });
  }

  it('a key in .env that is no setting: the nearest setting is suggested; other programs’ variables pass', () => {
    assert.deepEqual(
      unknownSettings(['SMTP_ULR', 'smtp_url', 'PORT', 'POSTGRES_PASSWORD', 'NODE_ENV', 'FROBNICATE']),
      [
        { name: 'SMTP_ULR', nearest: 'SMTP_URL' },
        { name: 'smtp_url', nearest: 'SMTP_URL' },
        { name: 'FROBNICATE', nearest: null },
      ],
    );
    assert.deepEqual(unknownSettings(['PUBLIC_ULR', 'LOGIN_FAILURES_PER_ADRESS_PER_MIN']), [
      { name: 'PUBLIC_ULR', nearest: 'PUBLIC_URL' },
      { name: 'LOGIN_FAILURES_PER_ADRESS_PER_MIN', nearest: 'LOGIN_FAILURES_PER_ADDRESS_PER_MIN' },
    ]);
    // The names are those loadConfig reads: every setting of docs/api.md §10 is one.
    const names = settingNames();
    for (const name of ['DATABASE_URL', 'ADMIN_PASSWORD', 'SECRETS_KEY', 'TRUST_PROXY', 'WEBAUTHN_RP_NAME']) {
      assert.ok(names.has(name), name);
    }
  });

  it('the started service logs each unknown .env key once, with the suggestion', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-dotenv-'));
    try {
      const port = await freePort();
      writeFileSync(
        join(dir, '.env'),
        `SMTP_ULR=smtp://mail.example.com\nPORT=${port}\nPOSTGRES_PASSWORD=x\n`,
      );
      const lines = await startAndStop(dir, {
        DATABASE_URL: `sqlite:${join(dir, 'g.db')}`,
        LOG_LEVEL: 'info',
        HOST: '127.0.0.1',
      });
      const found = warnings(lines).filter((m) => m.startsWith('.env sets'));
      assert.deepEqual(found, [
        '.env sets SMTP_ULR, which is not a Gatehouse setting and is ignored (did you mean SMTP_URL?)',
      ]);
      // The value is never logged: it may be a secret typed under the wrong name.
      assert.doesNotMatch(lines.join('\n'), /mail\.example\.com/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
