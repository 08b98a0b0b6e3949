import type { Kysely } from 'kysely';
import {
  type AuditEvent,
  insertUsersSkippingTaken,
  newUserRow,
  normalizeEmail,
  recordAudits,
  takenEmails,
  usersInCreationOrder,
} from '../../../identity/index.ts';
import { hashRefusal } from '../../../identity/passwords/passwords.ts';
import type { DB, NewUserRow, Role, UserRow, UserStatus } from '../../../platform/db/schema.ts';
import { quoted } from '../../../platform/quoted.ts';
import {
  formatHeader,
  formatRecord,
  type RawRecord,
  TRANSFER_FIELDS,
  type TransferField,
  type TransferFormat,
} from './user-transfer.format.ts';

/** A row that was not imported, with its line in the file. */
export interface ImportProblem {
  kind: 'invalid' | 'duplicate';
  line: number;
  reason: string;
}

export interface ImportSummary {
  read: number;
  imported: number;
  duplicates: number;
  invalid: number;
  dryRun: boolean;
}

/** A batch failed to write (database error): earlier batches are committed, as the summary says. */
export class ImportFailedError extends Error {
  override name = 'ImportFailedError';
  readonly summary: ImportSummary;

  constructor(summary: ImportSummary, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.summary = summary;
  }
}

export interface ImportOptions {
  /** Validate and report, write nothing. */
  dryRun?: boolean;
  /** Rows per transaction (default 500). */
  batchSize?: number;
  onProblem?: (problem: ImportProblem) => void;
}

const MAX_NAME = 1024;
const ROLES: readonly Role[] = ['admin', 'user'];
const STATUSES: readonly UserStatus[] = ['active', 'invited', 'disabled'];
const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no', '']);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Imports users from parsed records. Valid rows are inserted in batches, each batch in one
 * transaction with a `user.create` audit entry per user; an email already in the database or
 * earlier in the file is skipped and reported, as is an invalid row. Stored password hashes are
 * kept as they are: verify() accepts them and the next login re-hashes them to argon2id.
 */
export async function importUsers(
  db: Kysely<DB>,
  records: AsyncIterable<RawRecord>,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const batchSize = options.batchSize ?? 500;
  const summary: ImportSummary = {
    read: 0,
    imported: 0,
    duplicates: 0,
    invalid: 0,
    dryRun: !!options.dryRun,
  };
  const report = (p: ImportProblem) => {
    if (p.kind === 'invalid') summary.invalid++;
    else summary.duplicates++;
    options.onProblem?.(p);
  };
  const seen = new Map<string, number>();
  let batch: Array<{ line: number; row: NewUserRow }> = [];

  const flush = async () => {
    if (batch.length === 0) return;
    const current = batch;
    batch = [];
    let inserted: Set<string>;
    try {
      inserted = options.dryRun ? await existingAsMissing(db, current) : await insertBatch(db, current);
    } catch (err) {
      throw new ImportFailedError(summary, err);
    }
    for (const { line, row } of current) {
      if (inserted.has(row.email)) summary.imported++;
      else report({ kind: 'duplicate', line, reason: `${row.email} already exists` });
    }
  };

  const now = Date.now();
  for await (const record of records) {
    summary.read++;
    if ('error' in record) {
      report({ kind: 'invalid', line: record.line, reason: record.error });
      continue;
    }
    const parsed = toUserRow(record.fields, now);
    if ('error' in parsed) {
      report({ kind: 'invalid', line: record.line, reason: parsed.error });
      continue;
    }
    const earlier = seen.get(parsed.row.email);
    if (earlier !== undefined) {
      report({ kind: 'duplicate', line: record.line, reason: `${parsed.row.email} repeats line ${earlier}` });
      continue;
    }
    seen.set(parsed.row.email, record.line);
    batch.push({ line: record.line, row: parsed.row });
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return summary;
}

async function insertBatch(
  db: Kysely<DB>,
  batch: Array<{ line: number; row: NewUserRow }>,
): Promise<Set<string>> {
  return db.transaction().execute(async (trx) => {
    // A user created meanwhile (API, another import) is a duplicate, not a failure.
    const rows = await insertUsersSkippingTaken(
      trx,
      batch.map((b) => b.row),
    );
    const events: AuditEvent[] = rows.map((r) => ({
      action: 'user.create',
      actor: { type: 'system' },
      target: { type: 'user', id: r.id },
      details: { via: 'cli.users_import', role: r.role, status: r.status },
    }));
    await recordAudits(trx, events);
    return new Set(rows.map((r) => r.email));
  });
}

/** Dry run: what would be inserted (every email not already stored). */
async function existingAsMissing(
  db: Kysely<DB>,
  batch: Array<{ line: number; row: NewUserRow }>,
): Promise<Set<string>> {
  const emails = batch.map((b) => b.row.email);
  const taken = await takenEmails(db, emails);
  return new Set(emails.filter((e) => !taken.has(e)));
}

/** Validates one record into a user row, or says what is wrong with it. */
export function toUserRow(
  fields: Record<string, unknown>,
  now: number,
): { row: NewUserRow } | { error: string } {
  const unknown = Object.keys(fields).filter((k) => !(TRANSFER_FIELDS as readonly string[]).includes(k));
  if (unknown.length > 0) return { error: `unknown field(s) ${unknown.join(', ')}` };
  const f = fields as Partial<Record<TransferField, unknown>>;

  if (typeof f.email !== 'string') return { error: 'email is missing' };
  const email = normalizeEmail(f.email);
  if (email === null) return { error: `email ${quoted(f.email)} is not a valid address` };

  const name = f.name ?? '';
  if (typeof name !== 'string') return { error: 'name must be text' };
  if (name.length > MAX_NAME) return { error: `name is longer than ${MAX_NAME} characters` };

  const role = blank(f.role) ? 'user' : f.role;
  if (!ROLES.includes(role as Role)) return { error: 'role must be admin or user' };
  const status = blank(f.status) ? 'active' : f.status;
  if (!STATUSES.includes(status as UserStatus))
    return { error: 'status must be active, invited or disabled' };

  const verified = booleanOf(f.email_verified);
  if (verified === null) return { error: 'email_verified must be true or false' };

  let passwordHash: string | null = null;
  if (!blank(f.password_hash)) {
    // Refused before anything is stored: a planted cost would make every sign-in of that account
    // occupy a hashing slot for seconds (src/identity/passwords/passwords.ts, the ceilings verify applies).
    const refusal = typeof f.password_hash === 'string' ? hashRefusal(f.password_hash) : 'not a string';
    if (refusal !== null || typeof f.password_hash !== 'string')
      return { error: `password_hash is not a supported hash: ${refusal}` };
    passwordHash = f.password_hash;
  }

  let createdAt = now;
  if (!blank(f.created_at)) {
    const t =
      typeof f.created_at === 'string' && ISO.test(f.created_at) ? Date.parse(f.created_at) : Number.NaN;
    if (Number.isNaN(t)) return { error: 'created_at must be an ISO 8601 date-time' };
    createdAt = t;
  }

  const row = newUserRow(
    {
      created_via: 'import',
      email,
      name,
      role: role as Role,
      status: status as UserStatus,
      password_hash: passwordHash,
      email_verified: verified ? 1 : 0,
    },
    now,
  );
  return { row: { ...row, created_at: createdAt } };
}

function blank(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

function booleanOf(value: unknown): boolean | null {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (value === 0 || value === 1) return value === 1;
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  return TRUE.has(v) ? true : FALSE.has(v) ? false : null;
}

/** The record `users export` writes for a user: the import's own fields, hash included. */
export function exportRecord(user: UserRow): Record<TransferField, unknown> {
  return {
    email: user.email,
    name: user.name,
    role: user.role,
    status: user.status,
    email_verified: user.email_verified === 1,
    password_hash: user.password_hash,
    created_at: new Date(user.created_at).toISOString(),
  };
}

/**
 * Writes every user, oldest first, in pages (keyset on created_at, id) so memory stays flat.
 * `write` may return a promise to apply back-pressure. Returns how many users were written.
 */
export async function exportUsers(
  db: Kysely<DB>,
  format: TransferFormat,
  write: (text: string) => Promise<void> | void,
  pageSize = 1000,
): Promise<number> {
  let count = 0;
  let after: { created_at: number; id: string } | null = null;
  await write(formatHeader(format));
  for (;;) {
    const page = await usersInCreationOrder(db, after, pageSize);
    if (page.length === 0) return count;
    await write(page.map((u) => formatRecord(format, exportRecord(u))).join(''));
    count += page.length;
    const last = page.at(-1);
    if (!last || page.length < pageSize) return count;
    after = { created_at: last.created_at, id: last.id };
  }
}
