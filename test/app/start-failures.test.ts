import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { buildTestApp, json } from '../helpers/app.ts';
import { runEntry } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS } from '../helpers/databases.ts';
import { firstAdmin, sessionFor } from '../helpers/users.ts';

const UNREACHABLE = 'postgres://gatehouse:hunter2-secret@127.0.0.1:1/gatehouse';

describe('start failures are named before anything is changed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-start-'));
  let taken: Server;
  let port = 0;
  before(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  after(async () => {
    await new Promise((resolve) => taken.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('regression: a port clash was reported only after a fresh database was migrated and an admin password printed', async () => {
    const file = join(dir, 'fresh.db');
    const result = await runEntry(
      'src/main.ts',
      [],
      { PORT: String(port), DATABASE_URL: `sqlite:${file}` },
      dir,
    );
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr.trim(),
      `gatehouse: port ${port} on 127.0.0.1 is already in use (EADDRINUSE: another Gatehouse?); set PORT to a free port`,
    );
    assert.equal(result.stdout, '', 'no log line: no migration, no generated password');
    assert.equal(existsSync(file), false, 'the database was not even created');
  });

  for (const [label, script, args] of [
    ['serve', 'src/main.ts', []],
    ['migrate', 'src/cli.ts', ['migrate']],
    ['rotate-keys', 'src/cli.ts', ['rotate-keys']],
  ] as const) {
    it(`regression: ${label} on an unreachable PostgreSQL said "migration unknown failed"`, async () => {
      const result = await runEntry(
        script,
        [...args],
        { DATABASE_URL: UNREACHABLE, PUBLIC_URL: 'http://localhost:3000', PORT: '0', LOG_LEVEL: 'silent' },
        dir,
      );
      assert.equal(result.code, 1);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(
        lines[0] ?? '',
        /^gatehouse: .*cannot reach the database postgres:\/\/gatehouse:\*\*\*@127\.0\.0\.1:1\/gatehouse: .*ECONNREFUSED/,
      );
      assert.doesNotMatch(result.stderr, /migration/);
      assert.doesNotMatch(result.stderr, /hunter2-secret/);
    });
  }
});

/** The tables of a PostgreSQL database's public schema. */
async function pgTables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public'",
    );
    return rows.map((r) => r.table_name);
  } finally {
    await client.end();
  }
}

function sqliteTables(file: string): string[] {
  const db = new SQLite(file, { readonly: true });
  try {
    return (
      db.prepare("select name from sqlite_master where type = 'table'").all() as Array<{ name: string }>
    ).map((r) => r.name);
  } finally {
    db.close();
  }
}

const IP_RP_ID = /^gatehouse: configuration error: WEBAUTHN_RP_ID must be a domain name/;

// docs/configuration.md, "Checked before anything is written": every module's needs are checked
// before the database is opened, so a refused start leaves no migrated database and no printed
// one-time admin password behind it.
describe('module needs are checked before anything is written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-needs-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const base = { API_FORM: 'full', PORT: '0', PUBLIC_URL: 'http://127.0.0.1:3000' };

  it('regression: on SQLite a refused start (passkeys on an IP address) first created and migrated the file', async () => {
    const file = join(dir, 'fresh.db');
    const result = await runEntry('src/main.ts', [], { ...base, DATABASE_URL: `sqlite:${file}` }, dir);
    assert.equal(result.code, 1);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0] ?? '', IP_RP_ID);
    assert.equal(result.stdout, '', 'no log line: no migration, no generated password');
    assert.equal(existsSync(file), false, 'the database was not even created');
  });

  it('an existing, empty SQLite file stays empty (no tables, no users)', async () => {
    const file = join(dir, 'empty.db');
    new SQLite(file).close();
    const result = await runEntry('src/main.ts', [], { ...base, DATABASE_URL: `sqlite:${file}` }, dir);
    assert.equal(result.code, 1);
    assert.match(result.stderr.trim(), IP_RP_ID);
    assert.equal(result.stdout, '');
    assert.deepEqual(sqliteTables(file), []);
  });

  it('regression: PostgreSQL, API_FORM=full, no SECRETS_KEY migrated and created admin@example.com (printing its password) before it stopped', {
    skip: DIALECTS.includes('postgres') ? false : 'PostgreSQL only (TEST_DATABASE_URL)',
  }, async () => {
    const database = await createTestDatabase('postgres');
    try {
      const result = await runEntry(
        'src/main.ts',
        [],
        { API_FORM: 'full', PORT: '0', PUBLIC_URL: 'http://localhost:3000', DATABASE_URL: database.url },
        dir,
      );
      assert.equal(result.code, 1);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(
        lines[0] ?? '',
        /^gatehouse: configuration error: SECRETS_KEY must be set to enable the mfa module on PostgreSQL/,
      );
      assert.equal(result.stdout, '', 'no log line: no migration, no generated password');
      assert.deepEqual(await pgTables(database.url), [], 'the database is still empty');
    } finally {
      await database.drop();
    }
  });

  for (const dialect of DIALECTS) {
    it(`[${dialect}] a module an admin switched off does not stop the start; switched on, it does`, async () => {
      const database = await createTestDatabase(dialect);
      try {
        const t = await buildTestApp(dialect, { database, env: { API_FORM: 'full' } });
        const admin = (await sessionFor(t, await firstAdmin(t))).access_token;
        const off = await t.app.inject({
          method: 'PUT',
          url: '/api/v1/admin/modules/passkeys',
          headers: { authorization: `Bearer ${admin}` },
          payload: { enabled: false },
        });
        assert.equal(off.statusCode, 200, off.body);
        await t.close();
        // The stored switch is read before the needs are judged: passkeys stays off, so an IP is fine.
        const again = await t.restart({ PUBLIC_URL: 'http://127.0.0.1:3000' });
        assert.equal(again.ctx.modules.isEnabled('passkeys'), false);
        const on = await again.app.inject({
          method: 'PUT',
          url: '/api/v1/admin/modules/passkeys',
          headers: {
            authorization: `Bearer ${(await sessionFor(again, await firstAdmin(again))).access_token}`,
          },
          payload: { enabled: true },
        });
        assert.equal(on.statusCode, 409);
        assert.equal(json(on).code, 'module_unavailable');
        await again.close();
        // Form A turns passkeys off, but a stored switch turns it on: still refused, naming the variable.
        const formA = await createTestDatabase(dialect);
        try {
          const a = await buildTestApp(dialect, { database: formA });
          const token = (await sessionFor(a, await firstAdmin(a))).access_token;
          const res = await a.app.inject({
            method: 'PUT',
            url: '/api/v1/admin/modules/passkeys',
            headers: { authorization: `Bearer ${token}` },
            payload: { enabled: true },
          });
          assert.equal(res.statusCode, 200, res.body);
          await a.close();
          await assert.rejects(a.restart({ PUBLIC_URL: 'http://127.0.0.1:3000' }), (e: unknown) =>
            /^WEBAUTHN_RP_ID must be a domain name/.test((e as Error).message),
          );
        } finally {
          await formA.drop();
        }
      } finally {
        await database.drop();
      }
    });
  }
});
