import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  breachedFilterPath,
  breachedPasswords,
  parseBloomFilter,
} from '../../src/identity/passwords/breached-passwords.ts';
import { checkPasswordPolicy, commonPasswords } from '../../src/identity/passwords/password-policy.ts';
import { BREACHED_ONLY, STRONG_RANDOM } from './breached-support.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/breached-filter.mjs');
/** Every 40th kept entry of the source list, in rank order (docs/security.md, "Breached passwords"). */
const SAMPLE = fileURLToPath(new URL('./fixtures/breached-sample.txt', import.meta.url));
const MIN = 15;

/** The documented bound on the false-positive rate (docs/security.md): twice the design rate of 1e-4. */
const FPR_BOUND = 2e-4;

/** Random strong passwords from a fixed seed (SHA-256 in counter mode), 20 printable ASCII characters. */
function strongPassword(seed: string, i: number): string {
  const bytes = createHash('sha256').update(`${seed}-${i}`).digest();
  let out = '';
  for (let j = 0; j < 20; j++) out += String.fromCharCode(33 + ((bytes[j] as number) % 94));
  return out;
}

function sampleEntries(): string[] {
  return readFileSync(SAMPLE, 'utf8').split('\n').filter(Boolean);
}

describe('breached-password filter (assets/breached-passwords.bloom)', () => {
  it('is the documented filter: 474,743 entries, k = 13, 19.17 bits an entry, 1.1 MB', () => {
    const filter = breachedPasswords();
    assert.equal(filter.size, 474_743);
    assert.equal(filter.hashes, 13);
    assert.equal(filter.bits, 9_100_880);
    const bytes = statSync(breachedFilterPath()).size;
    assert.equal(bytes, 16 + filter.bits / 8);
    assert.ok(bytes <= 2 * 1024 * 1024, 'at most 2 MB');
    assert.equal(breachedPasswords(), filter, 'read once per process');
  });

  /* breached-false-negative: a Bloom filter may only err towards refusing; every listed entry must be found. */
  it('has no false negatives over a sample of 11,869 entries (every 40th of the list)', () => {
    const entries = sampleEntries();
    assert.equal(entries.length, 11_869);
    const filter = breachedPasswords();
    const missing = entries.filter((entry) => !filter.has(entry));
    assert.deepEqual(missing, []);
  });

  it('holds entries the common-password list does not', () => {
    const entries = sampleEntries();
    const beyond = entries.filter((entry) => !commonPasswords().has(entry));
    assert.ok(beyond.length > entries.length / 2, `${beyond.length} of ${entries.length} sampled are new`);
    for (const password of BREACHED_ONLY) {
      assert.equal(commonPasswords().has(password), false, password);
      assert.equal(breachedPasswords().has(password), true, password);
    }
  });

  it(`refuses fewer than ${FPR_BOUND} of 200,000 random strong passwords (fixed seed)`, () => {
    const filter = breachedPasswords();
    const samples = 200_000;
    let falsePositives = 0;
    for (let i = 0; i < samples; i++)
      if (filter.has(strongPassword('gatehouse-test-fpr', i))) falsePositives++;
    assert.ok(falsePositives / samples < FPR_BOUND, `${falsePositives} of ${samples}`);
    assert.ok(falsePositives > 0, 'a Bloom filter of this size does have false positives: the count is real');
  });

  it('refuses a file that is not a filter, or is cut short', () => {
    const good = readFileSync(breachedFilterPath());
    assert.throws(
      () => parseBloomFilter(Buffer.from('not a filter at all')),
      /not a breached-password filter/,
    );
    assert.throws(() => parseBloomFilter(good.subarray(0, good.length - 1)), /truncated or malformed/);
    const wrongVersion = Buffer.from(good.subarray(0, 64));
    wrongVersion[4] = 2;
    assert.throws(() => parseBloomFilter(wrongVersion), /version 1/);
  });
});

describe('password policy: breached passwords (docs/api.md §5)', () => {
  /* breached-list-unchecked: only the 49,233 common passwords were refused; the breached million is checked now. */
  it('refuses a breached password the common list lets through, case-insensitively, with its own reason', () => {
    for (const password of [...BREACHED_ONLY, 'StairwayToHeaven']) {
      const result = checkPasswordPolicy(password, { minLength: MIN });
      assert.equal(result.ok, false, password);
      if (result.ok) continue;
      assert.match(result.reason, /too common: it appears in a list of passwords exposed in data breaches/);
      assert.ok(!result.reason.includes(password), 'the reason never echoes the password');
    }
  });

  it('still refuses the common list first, and accepts a strong random password', () => {
    const common = checkPasswordPolicy('1qaz2wsx3edc4rfv', { minLength: MIN });
    assert.equal(common.ok, false);
    if (!common.ok) assert.match(common.reason, /frequently used passwords/);
    assert.deepEqual(checkPasswordPolicy(STRONG_RANDOM, { minLength: MIN }), { ok: true });
  });

  it('refuses a password whose rest, without the address, is a breached one', () => {
    const result = checkPasswordPolicy('ada stairwaytoheaven', { minLength: MIN, email: 'ada@example.com' });
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.reason, /email address/);
    const off = checkPasswordPolicy('ada stairwaytoheaven', {
      minLength: MIN,
      email: 'ada@example.com',
      breachedCheck: false,
    });
    assert.deepEqual(off, { ok: true }, 'the breached list is what refuses it');
  });

  it('breachedCheck false (PASSWORD_BREACHED_CHECK=off) keeps only the common list', () => {
    for (const password of BREACHED_ONLY) {
      assert.deepEqual(checkPasswordPolicy(password, { minLength: MIN, breachedCheck: false }), { ok: true });
    }
    assert.equal(checkPasswordPolicy('1qaz2wsx3edc4rfv', { minLength: MIN, breachedCheck: false }).ok, false);
  });
});

describe('scripts/breached-filter.mjs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bloom-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is deterministic: the same list gives the same bytes, and the filter holds every kept entry', () => {
    const list = join(dir, 'list.txt');
    // Mixed case, a duplicate and a short entry: lowercased, kept once, the short one left out.
    writeFileSync(
      list,
      `${sampleEntries().slice(0, 2000).join('\n')}\nPerAsperaAdAstra\nperasperaadastra\nshort7\n`,
    );
    const outputs = ['a.bloom', 'b.bloom'].map((name) => {
      const out = join(dir, name);
      execFileSync(process.execPath, [SCRIPT, '--quiet', '--out', out, list], { encoding: 'utf8' });
      return readFileSync(out);
    });
    assert.ok(outputs[0]?.equals(outputs[1] as Buffer), 'byte-identical');
    const filter = parseBloomFilter(outputs[0] as Buffer);
    assert.equal(filter.size, 2001, '2,000 sample entries and perasperaadastra once; short7 is under 8');
    for (const entry of [...sampleEntries().slice(0, 2000), 'perasperaadastra']) {
      assert.equal(filter.has(entry), true, entry);
    }
  });

  it('refuses to overwrite the shipped filter from any list but the pinned source', () => {
    const list = join(dir, 'other.txt');
    writeFileSync(list, 'correcthorsebatterystaple\n');
    const before = readFileSync(breachedFilterPath());
    const run = spawnSync(process.execPath, [SCRIPT, list], { encoding: 'utf8' });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /SHA-256 [0-9a-f]{64}, expected eac63238/);
    assert.ok(readFileSync(breachedFilterPath()).equals(before), 'the shipped filter is untouched');
  });
});
