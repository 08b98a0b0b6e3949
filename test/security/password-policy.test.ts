import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import {
  checkPasswordPolicy,
  commonPasswords,
  PASSWORD_MAX_LENGTH,
} from '../../src/identity/passwords/password-policy.ts';

const MIN = 15;

function cp(value: string): number {
  return [...value].length;
}

function assertRejected(
  password: string,
  opts: { minLength: number; email?: string },
  pattern: RegExp,
): void {
  const result = checkPasswordPolicy(password, opts);
  assert.equal(result.ok, false, `expected rejection of ${JSON.stringify(password)}`);
  if (result.ok) return;
  assert.match(result.reason, pattern);
  assert.ok(!result.reason.includes(password), 'the reason never echoes the password');
}

describe('password policy', () => {
  it('needs at least minLength code points: 14 fails, 15 passes', () => {
    const fourteen = 'plum-tide-k7xq';
    const fifteen = 'plum-tide-k7xqz';
    assert.equal(cp(fourteen), 14);
    assert.equal(cp(fifteen), 15);
    assertRejected(fourteen, { minLength: MIN }, /at least 15 characters/);
    assert.deepEqual(checkPasswordPolicy(fifteen, { minLength: MIN }), { ok: true });
  });

  it('counts code points, not UTF-16 units', () => {
    const turtles14 = '🐢'.repeat(14);
    const turtles15 = '🐢'.repeat(15);
    assert.equal(turtles14.length, 28, 'longer than 15 in UTF-16 units');
    assertRejected(turtles14, { minLength: MIN }, /at least 15/);
    assert.deepEqual(checkPasswordPolicy(turtles15, { minLength: MIN }), { ok: true });
    const mixed = 'ключ-𝄞-密码-🐢🐢-ok';
    assert.equal(cp(mixed), 15);
    assert.deepEqual(checkPasswordPolicy(mixed, { minLength: MIN }), { ok: true });
  });

  it('allows 256 code points and rejects 257, never truncating', () => {
    assert.equal(PASSWORD_MAX_LENGTH, 256);
    const max = 'k7xq-plum'.repeat(29).slice(0, 256);
    assert.equal(cp(max), 256);
    assert.deepEqual(checkPasswordPolicy(max, { minLength: MIN }), { ok: true });
    assertRejected(`${max}z`, { minLength: MIN }, /at most 256 characters/);
    const emoji256 = '🐢'.repeat(256);
    assert.deepEqual(checkPasswordPolicy(emoji256, { minLength: MIN }), { ok: true });
    assertRejected(`${emoji256}🐢`, { minLength: MIN }, /at most 256/);
    assertRejected('x'.repeat(1_000_000), { minLength: MIN }, /at most 256/);
  });

  it('ships a common-password list of at least 10,000 entries', () => {
    assert.ok(commonPasswords().size >= 10_000, `size ${commonPasswords().size}`);
  });

  // Pins the compact list (sorted string + binary search) against the package's own: every entry
  // is found, and neighbours that are not entries are not.
  it('finds exactly the package list entries', () => {
    const require = createRequire(import.meta.url);
    const pkg = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    const entries = new Set(pkg.dictionary['passwords-common'].map((e) => e.toLowerCase()));
    const list = commonPasswords();
    assert.equal(list.size, entries.size);
    for (const entry of entries) {
      assert.ok(list.has(entry), entry);
      for (const near of [`${entry}\u0000`, `${entry}~`, entry.slice(0, -1), `${entry}\n${entry}`]) {
        assert.equal(list.has(near), entries.has(near), JSON.stringify(near));
      }
    }
    assert.equal(list.has(''), false);
  });

  it('rejects common passwords, case-insensitively', () => {
    assert.ok(commonPasswords().has('passwordpassword'));
    assertRejected('passwordpassword', { minLength: MIN }, /too common/);
    assertRejected('PasswordPassword', { minLength: MIN }, /too common/);
    assertRejected('1qaz2wsx3edc4rfv', { minLength: MIN }, /too common/);
    // Short entries are caught too once the length rule lets them through.
    assertRejected('LetMeIn', { minLength: 6 }, /too common/);
    assertRejected('qwerty', { minLength: 6 }, /too common/);
  });

  it('rejects a password built around the email address, case-insensitively', () => {
    const email = 'Alice.Smith@example.com';
    assertRejected('my-ALICE.SMITH-phrase-42', { minLength: MIN, email }, /email address/);
    assert.deepEqual(checkPasswordPolicy('my-alice-phrase-42-x', { minLength: MIN, email }), { ok: true });
    assertRejected('bob-gardener-77x', { minLength: MIN, email: 'bob@example.com' }, /email address/);
    assert.deepEqual(checkPasswordPolicy('bob-the-gardener-77', { minLength: MIN }), { ok: true });
    // Changed with the rule: bob is one word of four, and the other three are 16 characters, a
    // password of the minimum length on their own (docs/api.md §5). The old rule refused any
    // password containing "bob" at all.
    assert.deepEqual(
      checkPasswordPolicy('bob-the-gardener-77', { minLength: MIN, email: 'bob@example.com' }),
      {
        ok: true,
      },
    );
  });

  it('regression: a 3-letter local part banned ordinary passphrases while a 2-letter one banned nothing; one rule for every length now', () => {
    const ada = { minLength: MIN, email: 'ada@example.com' };
    // The name as one word among many passes.
    assert.deepEqual(checkPasswordPolicy('ada lovelace analytical engine 1843', ada), { ok: true });
    // The local part, the address, and either with a short prefix or suffix: refused.
    // Shorter than the minimum they fail on length anyway; under a smaller minimum, still refused.
    assertRejected('ada', { ...ada, minLength: 3 }, /email address/);
    assertRejected('ada@example.com', { ...ada, minLength: 3 }, /email address/);
    for (const password of [
      'ADA@Example.com 2024-11-26',
      'ada123456789012',
      '123456789012ada',
      'ada2024ada2024!',
      'adalovelace12345',
      'ada ada ada ada ada ada',
    ]) {
      assertRejected(password, ada, /email address/);
    }
    // What is left must not be a common password either.
    assertRejected('ada password123456', ada, /email address/);
    // Two letters and one letter are held to the same rule, not skipped.
    const al = { minLength: MIN, email: 'al@example.com' };
    assert.deepEqual(checkPasswordPolicy('always-calm-tides-9', al), { ok: true });
    assertRejected('al al al al al al al al', al, /email address/);
    assertRejected('al-1234567890-al', al, /email address/);
    assertRejected(
      'x@example.com x@example.com',
      { minLength: MIN, email: 'x@example.com' },
      /email address/,
    );
    assert.deepEqual(
      checkPasswordPolicy('a walk through the gatehouse garden', { minLength: MIN, email: 'x@example.com' }),
      { ok: true },
    );
  });

  it('checks the password as given: no trimming', () => {
    const core = 'plum-tide-k7xq';
    assert.equal(cp(core), 14);
    assertRejected(core, { minLength: MIN }, /at least 15/);
    // Surrounding whitespace is part of the password and counts towards the length.
    assert.deepEqual(checkPasswordPolicy(`${core} `, { minLength: MIN }), { ok: true });
    assert.deepEqual(checkPasswordPolicy(` ${core}`, { minLength: MIN }), { ok: true });
    assertRejected(`${'plum-tide-k7x'} `, { minLength: MIN }, /at least 15/);
  });

  it('has no composition rules', () => {
    for (const pw of [
      'zebrafishmoonlight',
      'ZEBRAFISHMOONLIGHT',
      '918273645501928374',
      'zebra fish moon light',
    ]) {
      assert.deepEqual(checkPasswordPolicy(pw, { minLength: MIN }), { ok: true }, pw);
    }
  });

  it('rejects unpaired surrogates', () => {
    assertRejected(`plum-tide-k7xq-${'\uD83D'}`, { minLength: MIN }, /unpaired surrogate/);
  });
});
