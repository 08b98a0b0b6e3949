import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { quoted } from '../../../platform/quoted.ts';

/** The two file formats of `gatehouse users import|export`. */
export type TransferFormat = 'jsonl' | 'csv';

/** The columns, in export order. `email` is the only one an import requires. */
export const TRANSFER_FIELDS = [
  'email',
  'name',
  'role',
  'status',
  'email_verified',
  'password_hash',
  'created_at',
] as const;

export type TransferField = (typeof TRANSFER_FIELDS)[number];

/** One record read from a file: its first line number, and its fields or why it could not be read. */
export type RawRecord = { line: number; fields: Record<string, unknown> } | { line: number; error: string };

/** A problem with the whole file (bad header, unreadable): the import stops. */
export class TransferFileError extends Error {
  override name = 'TransferFileError';
}

/** Picks the format from a `--format` value or the file name. */
export function formatFor(path: string, explicit: string | undefined): TransferFormat {
  const f =
    explicit ?? (/\.csv$/i.test(path) ? 'csv' : /\.(jsonl|ndjson)$/i.test(path) ? 'jsonl' : undefined);
  if (f === 'csv' || f === 'jsonl') return f;
  if (f === undefined)
    throw new TransferFileError(`cannot tell the format of ${path}: use --format jsonl|csv`);
  throw new TransferFileError(`unknown format ${quoted(f)}: use jsonl or csv`);
}

/** Reads records from a JSONL or CSV stream, one at a time (files of any size). */
export function readRecords(input: Readable, format: TransferFormat): AsyncGenerator<RawRecord> {
  return format === 'csv' ? readCsv(input) : readJsonl(input);
}

async function* readJsonl(input: Readable): AsyncGenerator<RawRecord> {
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  for await (const text of lines) {
    line++;
    const trimmed = (line === 1 ? text.replace(/^\uFEFF/, '') : text).trim();
    if (trimmed === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      yield { line, error: 'not valid JSON' };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { line, error: 'not a JSON object' };
      continue;
    }
    yield { line, fields: value as Record<string, unknown> };
  }
}

async function* readCsv(input: Readable): AsyncGenerator<RawRecord> {
  let header: string[] | null = null;
  for await (const row of csvRows(input)) {
    if ('error' in row) {
      if (!header) throw new TransferFileError(`line ${row.line}: the header row is malformed: ${row.error}`);
      yield row;
      continue;
    }
    if (row.cells.length === 1 && row.cells[0] === '') continue;
    if (!header) {
      header = row.cells.map((h) => h.trim().toLowerCase());
      const unknown = header.filter((h) => !(TRANSFER_FIELDS as readonly string[]).includes(h));
      if (unknown.length > 0) {
        throw new TransferFileError(
          `unknown column(s) ${unknown.join(', ')}; the columns are ${TRANSFER_FIELDS.join(', ')}`,
        );
      }
      const repeated = header.find((h, i) => header?.indexOf(h) !== i);
      if (repeated) throw new TransferFileError(`column ${repeated} appears twice`);
      if (!header.includes('email')) throw new TransferFileError('the header has no email column');
      continue;
    }
    if (row.cells.length !== header.length) {
      yield { line: row.line, error: `has ${row.cells.length} fields, the header has ${header.length}` };
      continue;
    }
    const fields: Record<string, unknown> = {};
    header.forEach((h, i) => {
      fields[h] = unguardFormula(row.cells[i] ?? '');
    });
    yield { line: row.line, fields };
  }
  if (!header) throw new TransferFileError('the file is empty: a CSV import needs a header row');
}

type CsvRow = { line: number; cells: string[] } | { line: number; error: string };

/** RFC 4180 rows: quoted fields may hold commas, quotes ("") and line breaks; CRLF, LF or CR. */
async function* csvRows(input: Readable): AsyncGenerator<CsvRow> {
  // Bytes are decoded in streaming mode, so a character split across two chunks stays whole.
  const decoder = new TextDecoder('utf-8');
  // start: at a field's start; quoted: inside quotes; quote: a quote inside quotes (the next
  // character says whether it was "" or the end); closed: after the closing quote.
  let state: 'start' | 'unquoted' | 'quoted' | 'quote' | 'closed' = 'start';
  let cells: string[] = [];
  let cell = '';
  let bad: string | null = null;
  let line = 1;
  let rowLine = 1;
  let skipLf = false;
  let first = true;
  for await (const chunk of input as AsyncIterable<string | Uint8Array>) {
    const decoded = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const text = first ? decoded.replace(/^\uFEFF/, '') : decoded;
    first = false;
    for (const ch of text) {
      if (skipLf) {
        skipLf = false;
        if (ch === '\n') continue;
      }
      if (state === 'quoted') {
        if (ch === '"') state = 'quote';
        else {
          if (ch === '\n') line++;
          cell += ch;
        }
        continue;
      }
      if (state === 'quote') {
        if (ch === '"') {
          cell += '"';
          state = 'quoted';
          continue;
        }
        state = 'closed';
      }
      if (ch === ',') {
        cells.push(cell);
        cell = '';
        state = 'start';
      } else if (ch === '\n' || ch === '\r') {
        skipLf = ch === '\r';
        cells.push(cell);
        yield bad === null ? { line: rowLine, cells } : { line: rowLine, error: bad };
        cells = [];
        cell = '';
        bad = null;
        state = 'start';
        line++;
        rowLine = line;
      } else if (state === 'closed') {
        bad ??= 'text after a closing quote';
      } else if (ch === '"' && state === 'start') {
        state = 'quoted';
      } else {
        if (ch === '"') bad ??= 'a quote inside an unquoted field';
        cell += ch;
        state = 'unquoted';
      }
    }
  }
  if (state === 'quoted') {
    yield { line: rowLine, error: 'a quoted field is never closed' };
    return;
  }
  if (cell !== '' || cells.length > 0 || state === 'quote' || state === 'closed') {
    cells.push(cell);
    yield bad === null ? { line: rowLine, cells } : { line: rowLine, error: bad };
  }
}

/** One record in the chosen format, with its line break. */
export function formatRecord(format: TransferFormat, record: Record<TransferField, unknown>): string {
  if (format === 'jsonl') return `${JSON.stringify(record)}\n`;
  return `${TRANSFER_FIELDS.map((f) => csvCell(record[f])).join(',')}\n`;
}

/** The CSV header line (JSONL has none). */
export function formatHeader(format: TransferFormat): string {
  return format === 'csv' ? `${TRANSFER_FIELDS.join(',')}\n` : '';
}

function csvCell(value: unknown): string {
  const text = guardFormula(value === null || value === undefined ? '' : String(value));
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

// A cell a spreadsheet would run as a formula: it starts with = + - @, tab or CR (OWASP "CSV
// Injection"), possibly behind quotes this guard added before. Names and even addresses
// (`=x@example.com` is valid) can start so.
const FORMULA = /^'*[=+\-@\t\r]/;

/**
 * Export: a formula-like cell gets one leading `'`, which spreadsheets show as text: an exported
 * file opened in a spreadsheet never runs a formula a user typed as a name (CSV injection).
 * A cell that already looks guarded gets one more, so `unguardFormula` can always take exactly one
 * off and the import gives back the very text exported.
 */
export function guardFormula(text: string): string {
  return FORMULA.test(text) ? `'${text}` : text;
}

/** Import: the inverse of `guardFormula` (one `'` off a guarded cell; anything else as it is). */
export function unguardFormula(text: string): string {
  return text.startsWith("'") && FORMULA.test(text) ? text.slice(1) : text;
}
