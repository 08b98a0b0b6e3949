import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { after, before, describe, it } from 'node:test';
import type { Algorithm } from '@node-rs/argon2';
import { hash as argon2Hash } from '@node-rs/argon2';
import bcrypt from 'bcryptjs';
import {
  ARGON2_MEMORY_COST_KIB,
  ARGON2_PARALLELISM,
  ARGON2_TIME_COST,
  createPasswordHasher,
  defaultMaxConcurrent,
  HashCapacityError,
  type PasswordHasher,
} from '../../src/identity/passwords/passwords.ts';

const PASSWORD = 'correct horse battery staple';

function b64(buf: Buffer): string {
  return buf.toString('base64').replace(/=+$/, '');
}

function scryptPhc(password: string, salt: Buffer, ln: number, r: number, p: number): string {
  const derived = scryptSync(password, salt, 32, { N: 2 ** ln, r, p });
  return `$scrypt$ln=${ln},r=${r},p=${p}$${b64(salt)}$${b64(derived)}`;
}

describe('password hasher', () => {
  let hasher: PasswordHasher;
  let stored: string;

  before(async () => {
    hasher = createPasswordHasher();
    stored = await hasher.hash(PASSWORD);
  });

  it('uses the OWASP argon2id parameters', () => {
    assert.equal(ARGON2_MEMORY_COST_KIB, 19456);
    assert.equal(ARGON2_TIME_COST, 2);
    assert.equal(ARGON2_PARALLELISM, 1);
    assert.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
  });

  it('round-trips and rejects a wrong password', async () => {
    assert.equal(await hasher.verify(stored, PASSWORD), true);
    assert.equal(await hasher.verify(stored, `${PASSWORD} `), false);
    assert.equal(await hasher.verify(stored, 'Correct horse battery staple'), false);
  });

  it('salts each hash', async () => {
    const again = await hasher.hash(PASSWORD);
    assert.notEqual(again, stored);
    assert.equal(await hasher.verify(again, PASSWORD), true);
  });

  it('returns false, never throws, on malformed stored hashes', async () => {
    const malformed = [
      '',
      'plaintext-password',
      PASSWORD,
      '$argon2id$',
      '$argon2id$v=19$m=19456,t=2,p=1$',
      stored.slice(0, -10),
      `${stored.slice(0, -4)}!!!!`,
      stored.replace('$argon2id$', '$argon2xx$'),
      // Well-formed enough for the pattern, rejected by the native library (salt/tag too short, m too small).
      '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA',
      '$argon2id$v=19$m=1,t=2,p=1$c2FsdHNhbHRzYWx0$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE',
      '$2b$10$tooShort',
      '$2b$99$abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0',
      '$scrypt$ln=14,r=8,p=1$!!!!$????',
      '$scrypt$ln=14,r=8,p=1$c2FsdA$c2hvcnQ',
      '$scrypt$ln=0,r=8,p=1$c2FsdHNhbHQ$YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE',
    ];
    for (const bad of malformed) {
      assert.equal(await hasher.verify(bad, PASSWORD), false, `stored hash ${JSON.stringify(bad)}`);
    }
    // A null column read from the database must not throw either.
    assert.equal(await hasher.verify(null as unknown as string, PASSWORD), false);
  });

  it('flags anything but argon2id v=19 m=19456,t=2,p=1 for rehash', async () => {
    assert.equal(hasher.needsRehash(stored), false);
    const weaker = await argon2Hash(PASSWORD, { memoryCost: 19456, timeCost: 1, parallelism: 1 });
    assert.match(weaker, /^\$argon2id\$v=19\$m=19456,t=1,p=1\$/);
    assert.equal(hasher.needsRehash(weaker), true);
    assert.equal(await hasher.verify(weaker, PASSWORD), true, 'old-parameter hashes still verify');
    const lessMemory = await argon2Hash(PASSWORD, { memoryCost: 8192, timeCost: 2, parallelism: 1 });
    assert.equal(hasher.needsRehash(lessMemory), true);
    const argon2i = await argon2Hash(PASSWORD, { algorithm: 1 as Algorithm, memoryCost: 19456 });
    assert.match(argon2i, /^\$argon2i\$/);
    assert.equal(hasher.needsRehash(argon2i), true);
    assert.equal(await hasher.verify(argon2i, PASSWORD), true);
    assert.equal(hasher.needsRehash(bcrypt.hashSync(PASSWORD, 4)), true);
    assert.equal(hasher.needsRehash(scryptPhc(PASSWORD, randomBytes(16), 10, 8, 1)), true);
    assert.equal(hasher.needsRehash(''), true);
    assert.equal(hasher.needsRehash('not a hash'), true);
  });

  it('verifies legacy bcrypt hashes ($2a$, $2b$, $2y$)', async () => {
    const b = await bcrypt.hash(PASSWORD, 4);
    assert.match(b, /^\$2b\$04\$/);
    for (const variant of [b, b.replace('$2b$', '$2a$'), b.replace('$2b$', '$2y$')]) {
      assert.equal(await hasher.verify(variant, PASSWORD), true, variant.slice(0, 4));
      assert.equal(await hasher.verify(variant, 'wrong password'), false, variant.slice(0, 4));
    }
  });

  it('refuses bcrypt costs above the ceiling without computing them', async () => {
    const b = await bcrypt.hash(PASSWORD, 4);
    assert.equal(await hasher.verify(b.replace('$04$', '$20$'), PASSWORD), false);
  });

  it('verifies legacy scrypt hashes in $scrypt$ln=,r=,p= format', async () => {
    const s = scryptPhc(PASSWORD, randomBytes(16), 14, 8, 1);
    assert.equal(await hasher.verify(s, PASSWORD), true);
    assert.equal(await hasher.verify(s, 'wrong password'), false);
    // Parameters are part of the hash: the same salt and key under another r must fail.
    assert.equal(await hasher.verify(s.replace(',r=8,', ',r=4,'), PASSWORD), false);
  });

  it("accepts passlib's ab64 base64 ('.' for '+') in scrypt hashes", async () => {
    // 0xfb 0xef 0xbe encodes as "++++", so the salt is guaranteed to contain '+'.
    const salt = Buffer.concat([Buffer.from([0xfb, 0xef, 0xbe]), randomBytes(13)]);
    const s = scryptPhc(PASSWORD, salt, 12, 8, 1);
    assert.ok(s.includes('+'));
    assert.equal(await hasher.verify(s.replaceAll('+', '.'), PASSWORD), true);
  });

  it('verifyDummy resolves false and is counted', async () => {
    const h = createPasswordHasher();
    assert.equal(h.stats().dummyVerifications, 0);
    assert.equal(await h.verifyDummy(PASSWORD), false);
    assert.equal(await h.verifyDummy(''), false);
    assert.equal(h.stats().dummyVerifications, 2);
  });
});

describe('password hasher capacity', () => {
  const saved = process.env.UV_THREADPOOL_SIZE;
  after(() => {
    if (saved === undefined) delete process.env.UV_THREADPOOL_SIZE;
    else process.env.UV_THREADPOOL_SIZE = saved;
  });

  it('runs one, queues one and rejects the rest with HashCapacityError', async () => {
    const h = createPasswordHasher({ maxConcurrent: 1, maxQueue: 1 });
    const stored = await h.hash(PASSWORD);
    const calls = Array.from({ length: 5 }, () => h.verify(stored, PASSWORD));
    assert.deepEqual(h.stats(), {
      running: 1,
      queued: 1,
      dummyVerifications: 0,
      rejected: 3,
      hashes: 1,
      verifications: 1,
    });

    const results = await Promise.allSettled(calls);
    const fulfilled = results.filter((r) => r.status === 'fulfilled');
    const rejected = results.filter((r) => r.status === 'rejected');
    assert.equal(fulfilled.length, 2);
    for (const r of fulfilled) assert.equal(r.value, true);
    assert.equal(rejected.length, 3);
    for (const r of rejected) {
      assert.ok(r.reason instanceof HashCapacityError);
      assert.ok(r.reason instanceof Error);
      assert.equal(r.reason.name, 'HashCapacityError');
      assert.ok(r.reason.retryAfterS >= 1);
    }
    assert.deepEqual(h.stats(), {
      running: 0,
      queued: 0,
      dummyVerifications: 0,
      rejected: 3,
      hashes: 1,
      verifications: 2,
    });
    assert.equal(await h.verify(stored, PASSWORD), true, 'capacity returns once the queue drains');
  });

  it('puts hash and verifyDummy through the same limiter', async () => {
    const h = createPasswordHasher({ maxConcurrent: 1, maxQueue: 0 });
    const first = h.verifyDummy(PASSWORD);
    await assert.rejects(h.hash(PASSWORD), HashCapacityError);
    await assert.rejects(h.verifyDummy(PASSWORD), HashCapacityError);
    assert.equal(await first, false);
    assert.equal(h.stats().dummyVerifications, 1);
    assert.equal(h.stats().rejected, 2);
  });

  it('does not occupy a slot for a malformed hash', async () => {
    const h = createPasswordHasher({ maxConcurrent: 1, maxQueue: 0 });
    const first = h.verifyDummy(PASSWORD);
    assert.equal(await h.verify('garbage', PASSWORD), false);
    assert.equal(await first, false);
    assert.equal(h.stats().rejected, 0);
  });

  it('defaults maxConcurrent to UV_THREADPOOL_SIZE, else 4, at most the CPUs available', () => {
    const cpus = availableParallelism();
    process.env.UV_THREADPOOL_SIZE = '7';
    assert.equal(defaultMaxConcurrent(), Math.min(7, cpus));
    process.env.UV_THREADPOOL_SIZE = '';
    assert.equal(defaultMaxConcurrent(), Math.min(4, cpus));
    process.env.UV_THREADPOOL_SIZE = 'lots';
    assert.equal(defaultMaxConcurrent(), Math.min(4, cpus));
    delete process.env.UV_THREADPOOL_SIZE;
    assert.equal(defaultMaxConcurrent(), Math.min(4, cpus));
  });

  it('rejects nonsensical limits', () => {
    assert.throws(() => createPasswordHasher({ maxConcurrent: 0 }), RangeError);
    assert.throws(() => createPasswordHasher({ maxConcurrent: 1.5 }), RangeError);
    assert.throws(() => createPasswordHasher({ maxQueue: -1 }), RangeError);
  });
});
