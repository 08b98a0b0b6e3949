import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { type Algorithm, hash as argon2Hash } from '@node-rs/argon2';
import { hashSync as bcryptHash } from 'bcryptjs';
import { updateUser } from '../../src/identity/index.ts';
import { createPasswordHasher } from '../../src/identity/passwords/passwords.ts';
import { type RawRecord, readRecords } from '../../src/modules/users/transfer/user-transfer.format.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

interface Legacy {
  email: string;
  password: string;
  hash: string;
  needsRehash: boolean;
}

/** Hashes as other systems store them (cheap parameters: this is about formats, not strength). */
async function legacyHashes(): Promise<Legacy[]> {
  const pw = (n: string) => `old password of ${n} ${randomBytes(4).toString('hex')}`;
  const out: Legacy[] = [];
  const add = (email: string, password: string, hash: string, needsRehash = true) =>
    out.push({ email, password, hash, needsRehash });
  const b = pw('bcrypt');
  const bcrypt2b = bcryptHash(b, 4);
  add('bcrypt-2b@example.com', b, bcrypt2b);
  // $2a$ and $2y$ differ from $2b$ only by label for passwords like these (PHP writes $2y$).
  add('bcrypt-2a@example.com', b, bcrypt2b.replace(/^\$2b\$/, '$2a$'));
  add('bcrypt-2y@example.com', b, bcrypt2b.replace(/^\$2b\$/, '$2y$'));
  const a = pw('argon2id');
  add(
    'argon2id@example.com',
    a,
    await argon2Hash(a, { algorithm: 2 as Algorithm, memoryCost: 4096, timeCost: 1 }),
  );
  const i = pw('argon2i');
  add(
    'argon2i@example.com',
    i,
    await argon2Hash(i, { algorithm: 1 as Algorithm, memoryCost: 4096, timeCost: 3 }),
  );
  const s = pw('scrypt');
  const salt = randomBytes(16);
  const derived = scryptSync(s, salt, 32, { N: 1024, r: 8, p: 1 });
  const b64 = (buf: Buffer) => buf.toString('base64').replace(/=+$/, '');
  add('scrypt@example.com', s, `$scrypt$ln=10,r=8,p=1$${b64(salt)}$${b64(derived)}`);
  const c = pw('current');
  add('current@example.com', c, await createPasswordHasher().hash(c), false);
  return out;
}

async function usersOf(url: string) {
  const database = openDatabase(url);
  try {
    return await database.db.selectFrom('users').selectAll().orderBy('email').execute();
  } finally {
    await database.close();
  }
}

const comparable = (rows: Awaited<ReturnType<typeof usersOf>>) =>
  rows.map(({ email, name, role, status, email_verified, password_hash, created_at }) => ({
    email,
    name,
    role,
    status,
    email_verified,
    password_hash,
    created_at,
  }));

describe('users import: file reading', () => {
  const read = async (chunks: string[], format: 'csv' | 'jsonl') => {
    const out: RawRecord[] = [];
    for await (const r of readRecords(Readable.from(chunks), format)) out.push(r);
    return out;
  };

  it('reads RFC 4180 CSV split at any point: quotes, commas, line breaks, CRLF; line numbers of records', async () => {
    const text =
      '\uFEFFemail,name\r\na@example.com,"Lovelace, Ada ""the first"""\r\nb@example.com,"two\r\nlines"\r\n' +
      'c@example.com,plain\r\nd@example.com,"bad"x\r\ne@example.com\r\n';
    const expected = [
      { line: 2, fields: { email: 'a@example.com', name: 'Lovelace, Ada "the first"' } },
      { line: 3, fields: { email: 'b@example.com', name: 'two\r\nlines' } },
      { line: 5, fields: { email: 'c@example.com', name: 'plain' } },
      { line: 6, error: 'text after a closing quote' },
      { line: 7, error: 'has 1 fields, the header has 2' },
    ];
    assert.deepEqual(await read([text], 'csv'), expected);
    // Every split point, including inside "" and between \r and \n.
    for (let cut = 1; cut < text.length; cut++) {
      assert.deepEqual(await read([text.slice(0, cut), text.slice(cut)], 'csv'), expected, `cut at ${cut}`);
    }
  });

  it('refuses a CSV header with an unknown or missing column', async () => {
    await assert.rejects(read(['email,nickname\n'], 'csv'), /unknown column\(s\) nickname/);
    await assert.rejects(read(['name,role\n'], 'csv'), /no email column/);
    await assert.rejects(read([''], 'csv'), /empty/);
  });

  it('reads JSONL with blank lines, reporting lines that are not objects', async () => {
    const records = await read(
      ['{"email":"a@example.com"}\n\n[1]\n{oops\n{"email":"b@example.com"}'],
      'jsonl',
    );
    assert.deepEqual(records, [
      { line: 1, fields: { email: 'a@example.com' } },
      { line: 3, error: 'not a JSON object' },
      { line: 4, error: 'not valid JSON' },
      { line: 5, fields: { email: 'b@example.com' } },
    ]);
  });
});

for (const dialect of DIALECTS) {
  describe(`users import/export CLI [${dialect}]`, () => {
    let dir: string;
    let legacy: Legacy[];
    let source: TestDatabase;
    let t: TestApp;
    const cleanup: TestDatabase[] = [];
    const fresh = async () => {
      const db = await createTestDatabase(dialect);
      cleanup.push(db);
      return db;
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-transfer-'));
      legacy = await legacyHashes();
      source = await createTestDatabase(dialect);
    });
    after(async () => {
      await t?.destroy();
      for (const db of cleanup) await db.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('imports legacy hashes, skipping duplicates and invalid rows with their line numbers', async () => {
      const lines = [
        ...legacy.map((u, i) =>
          JSON.stringify({ email: u.email, name: `User ${i}`, email_verified: true, password_hash: u.hash }),
        ),
        JSON.stringify({
          email: '  No.Hash@Example.COM ',
          name: 'No hash',
          role: 'admin',
          status: 'disabled',
        }), // 8
        JSON.stringify({ email: 'not-an-email' }), // 9
        '', // 10
        JSON.stringify({ email: 'BCRYPT-2B@example.com' }), // 11: duplicate of line 1
        JSON.stringify({ email: 'extra@example.com', nickname: 'x' }), // 12
        JSON.stringify({
          email: 'badhash@example.com',
          password_hash: 'md5:5f4dcc3b5aa765d61d8327deb882cf99',
        }), // 13
        '{not json', // 14
        JSON.stringify({
          email: 'costly@example.com',
          password_hash: legacy[0]?.hash.replace('$04$', '$31$'),
        }), // 15
        JSON.stringify({ email: 'role@example.com', role: 'root' }), // 16
      ];
      const file = join(dir, 'users.jsonl');
      writeFileSync(file, `${lines.join('\n')}\n`);
      const run = await runCli(['users', 'import', file], source.url);
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stdout,
        /imported 8 user\(s\) from 15 record\(s\); 1 duplicate\(s\) and 6 invalid row\(s\) skipped/,
      );
      for (const expected of [
        /^line 9: invalid: email "not-an-email" is not a valid address$/m,
        /^line 11: skipped: bcrypt-2b@example\.com repeats line 1$/m,
        /^line 12: invalid: unknown field\(s\) nickname$/m,
        /^line 13: invalid: password_hash is not a supported hash/m,
        /^line 14: invalid: not valid JSON$/m,
        /^line 15: invalid: password_hash is not a supported hash/m,
        /^line 16: invalid: role must be admin or user$/m,
      ]) {
        assert.match(run.stderr, expected);
      }

      const rows = await usersOf(source.url);
      assert.equal(rows.length, 8);
      const noHash = rows.find((r) => r.email === 'no.hash@example.com');
      assert.ok(noHash, 'email normalized');
      assert.equal(noHash.password_hash, null);
      assert.equal(noHash.role, 'admin');
      assert.equal(noHash.status, 'disabled');
      assert.equal(noHash.email_verified, 0);

      // Importing the same file again: everything is a duplicate now.
      const again = await runCli(['users', 'import', file], source.url);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /imported 0 user\(s\).*9 duplicate\(s\)/);
      assert.match(again.stderr, /^line 1: skipped: bcrypt-2b@example\.com already exists$/m);
    });

    it('imported hashes verify with the old passwords and ask for a rehash to argon2id', async () => {
      t = await buildTestApp(dialect, { database: source });
      const { passwords } = t.ctx;
      for (const u of legacy) {
        const row = await t.ctx.db
          .selectFrom('users')
          .selectAll()
          .where('email', '=', u.email)
          .executeTakeFirstOrThrow();
        assert.equal(row.password_hash, u.hash);
        assert.equal(await passwords.verify(row.password_hash ?? '', u.password), true, u.email);
        assert.equal(await passwords.verify(row.password_hash ?? '', `${u.password}!`), false, u.email);
        assert.equal(passwords.needsRehash(row.password_hash ?? ''), u.needsRehash, u.email);
      }
      // What rehash-on-login does with it: the new hash is argon2id and stays put.
      const u = legacy[0];
      assert.ok(u);
      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', u.email)
        .executeTakeFirstOrThrow();
      await updateUser(t.ctx.db, row.id, { password_hash: await passwords.hash(u.password) });
      const upgraded = await t.ctx.db
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      assert.match(upgraded.password_hash ?? '', /^\$argon2id\$v=19\$/);
      assert.equal(passwords.needsRehash(upgraded.password_hash ?? ''), false);
      assert.equal(await passwords.verify(upgraded.password_hash ?? '', u.password), true);
    });

    it('audits each imported user once as user.create by the system', async () => {
      const entries = await t.ctx.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'user.create')
        .execute();
      assert.equal(entries.length, 8);
      const ids = new Set(
        (
          await t.ctx.db
            .selectFrom('users')
            .select('id')
            .where('email', '!=', 'root@gatehouse.test')
            .execute()
        ).map((r) => r.id),
      );
      for (const e of entries) {
        assert.equal(e.actor_type, 'system');
        assert.equal(e.target_type, 'user');
        assert.ok(ids.has(e.target_id ?? ''));
        assert.ok(!e.details.includes('$'), 'no hash in details');
      }
      assert.equal(new Set(entries.map((e) => e.target_id)).size, 8);
    });

    for (const format of ['jsonl', 'csv'] as const) {
      it(`export → import → export round trip (${format}) gives the same users`, async () => {
        const exported = await runCli(['users', 'export', '--format', format], source.url);
        assert.equal(exported.code, 0, exported.stderr);
        assert.match(exported.stderr, /warning: the export holds password hashes/);
        const file = join(dir, `export.${format}`);
        writeFileSync(file, exported.stdout);

        const target = await fresh();
        const imported = await runCli(['users', 'import', file], target.url);
        assert.equal(imported.code, 0, imported.stderr);
        const original = await usersOf(source.url);
        assert.match(imported.stdout, new RegExp(`imported ${original.length} user`));
        assert.deepEqual(comparable(await usersOf(target.url)), comparable(original));

        const reexported = await runCli(['users', 'export', '--format', format], target.url);
        assert.equal(reexported.stdout, exported.stdout);
      });
    }

    it('a dry run reports and writes nothing', async () => {
      const target = await fresh();
      const file = join(dir, 'dry.csv');
      writeFileSync(file, 'email,name\nx@example.com,X\ny@example.com,"Y, the second"\nnope,Z\n');
      const run = await runCli(['users', 'import', file, '--dry-run'], target.url);
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stdout,
        /dry run: would import 2 user\(s\) from 3 record\(s\); 0 duplicate\(s\) and 1 invalid/,
      );
      assert.equal((await usersOf(target.url)).length, 0);
    });

    it('fails with one line and a non-zero exit on fatal errors', async () => {
      const target = await fresh();
      // Exit 1: the command ran and failed; exit 2: wrong arguments, refused before anything opened.
      const cases: Array<[string[], RegExp, number]> = [
        [['users', 'import', join(dir, 'missing.jsonl')], /cannot read .*missing\.jsonl: no such file/, 1],
        [['users', 'import', join(dir, 'users.txt')], /cannot tell the format/, 1],
        [['users', 'import'], /users import takes <file>/, 2],
        [['users', 'export', '--format', 'xml'], /unknown format "xml"/, 1],
        [['users', 'frobnicate'], /unknown command "users frobnicate"/, 2],
        [['users', 'import', 'a.csv', '--force'], /Unknown option '--force'/, 2],
      ];
      const badHeader = join(dir, 'bad-header.csv');
      writeFileSync(badHeader, 'email,password\nx@example.com,secret\n');
      cases.push([['users', 'import', badHeader], /unknown column\(s\) password/, 1]);
      const runs = await Promise.all(cases.map(([args]) => runCli(args, target.url)));
      for (const [n, [args, message, code]] of cases.entries()) {
        const run = runs[n];
        assert.ok(run);
        assert.equal(run.code, code, args.join(' '));
        assert.match(run.stderr, message);
        assert.ok(!run.stderr.includes('    at '), 'no stack trace');
      }
      assert.equal((await usersOf(target.url)).length, 0);
      const badUrl = await runCli(['users', 'export'], 'mysql://nope');
      assert.equal(badUrl.code, 1);
      assert.match(badUrl.stderr, /configuration error: DATABASE_URL/);
    });
  });
}
