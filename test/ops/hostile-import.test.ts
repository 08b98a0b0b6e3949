import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashSync as bcryptHash } from 'bcryptjs';
import { openDatabase } from '../../src/platform/db/database.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

/*
 * A hostile import file (docs/operations.md `users import`; docs/security.md Round 3): stored hashes
 * whose parameters would make every sign-in of the account occupy a hashing slot for seconds are
 * refused row by row with a message naming the cost, before anything is stored; the other rows are
 * imported (the documented contract: bad rows are reported and skipped). JSONL and CSV alike.
 */

const SALT = 'c2FsdHNhbHRzYWx0c2FsdA';
const TAG = 'aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';
const argon = (params: string) => `$argon2id$v=19$${params}$${SALT}$${TAG}`;
const scrypt = (params: string) => `$scrypt$${params}$${SALT}$${TAG}`;

const HOSTILE: Array<{ email: string; hash: string; reason: RegExp }> = [
  {
    email: 'argon-m@example.com',
    hash: argon('m=4194304,t=2,p=1'),
    reason: /argon2 cost m=4194304,t=2,p=1 is over the limits/,
  },
  {
    email: 'argon-t@example.com',
    hash: argon('m=19456,t=100000,p=1'),
    reason: /argon2 cost .* over the limits/,
  },
  {
    email: 'argon-p@example.com',
    hash: argon('m=19456,t=2,p=255'),
    reason: /argon2 cost .* over the limits/,
  },
  // Each parameter within its own ceiling, their product (the time) ~100 times a normal check.
  { email: 'argon-work@example.com', hash: argon('m=262144,t=16,p=1'), reason: /m×t ≤ 1048576/ },
  {
    email: 'argon-digits@example.com',
    hash: argon('m=99999999999999999999999,t=2,p=1'),
    reason: /argon2 cost/,
  },
  {
    email: 'bcrypt-31@example.com',
    hash: `$2b$31$${'a'.repeat(53)}`,
    reason: /bcrypt cost 31 is outside 4–15/,
  },
  {
    email: 'bcrypt-16@example.com',
    hash: `$2b$16$${'a'.repeat(53)}`,
    reason: /bcrypt cost 16 is outside 4–15/,
  },
  {
    email: 'scrypt-ln@example.com',
    hash: scrypt('ln=30,r=8,p=1'),
    reason: /scrypt cost ln=30,r=8,p=1 is over the limits/,
  },
  {
    email: 'scrypt-p@example.com',
    hash: scrypt('ln=10,r=8,p=999'),
    reason: /scrypt cost .* over the limits/,
  },
  {
    email: 'scrypt-work@example.com',
    hash: scrypt('ln=18,r=8,p=16'),
    reason: /scrypt cost .* over the limits/,
  },
];

function rowsFor(goodHash: string) {
  return [
    { email: 'good-first@example.com', password_hash: goodHash },
    ...HOSTILE.map((h) => ({ email: h.email, password_hash: h.hash })),
    { email: 'good-last@example.com', password_hash: goodHash },
  ];
}

async function storedUsers(url: string) {
  const database = openDatabase(url);
  try {
    return await database.db.selectFrom('users').select(['email', 'password_hash']).execute();
  } finally {
    await database.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`hostile import: hash costs over the ceilings [${dialect}]`, () => {
    let dir: string;
    const dbs: TestDatabase[] = [];
    const goodHash = bcryptHash('an imported password 1', 4);
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-hostile-import-'));
    });
    after(async () => {
      for (const db of dbs) await db.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const format of ['jsonl', 'csv'] as const) {
      it(`hostile-import-hash-cost (${format}): each refused with its cost named, nothing of it stored, the rest imported`, async () => {
        const db = await createTestDatabase(dialect);
        dbs.push(db);
        const rows = rowsFor(goodHash);
        const file = join(dir, `users.${format}`);
        const body =
          format === 'jsonl'
            ? rows.map((r) => JSON.stringify(r)).join('\n')
            : ['email,password_hash', ...rows.map((r) => `${r.email},"${r.password_hash}"`)].join('\n');
        writeFileSync(file, `${body}\n`);
        const run = await runCli(['users', 'import', file], db.url);
        assert.equal(run.code, 0, run.stderr);
        assert.match(
          run.stdout,
          new RegExp(
            `imported 2 user\\(s\\) from ${rows.length} record\\(s\\); 0 duplicate\\(s\\) and ${HOSTILE.length} invalid`,
          ),
        );
        // Line numbers: JSONL's first record is line 1; CSV's is line 2 (after the header).
        const first = format === 'jsonl' ? 2 : 3;
        HOSTILE.forEach((h, i) => {
          const line = run.stderr.split('\n').find((l) => l.startsWith(`line ${first + i}: `)) ?? '';
          assert.match(line, /invalid: password_hash is not a supported hash: /, h.email);
          assert.match(line, h.reason, h.email);
          assert.ok(!line.includes(TAG), 'the hash itself is not echoed');
        });
        const stored = await storedUsers(db.url);
        assert.deepEqual(stored.map((u) => u.email).sort(), [
          'good-first@example.com',
          'good-last@example.com',
        ]);
        for (const u of stored) assert.equal(u.password_hash, goodHash);
      });
    }
  });
}
