import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AuditRow } from '../../src/identity/index.ts';
import type { TestApp } from './app.ts';

/** Every audit entry, oldest first. */
export function auditEntries(t: TestApp): Promise<AuditRow[]> {
  return t.ctx.db.selectFrom('audit_log').selectAll().orderBy('at').orderBy('id').execute();
}

/** Empties the audit trail, so the next request's entries are all there is. */
export async function clearAudit(t: TestApp): Promise<void> {
  await t.ctx.db.deleteFrom('audit_log').execute();
}

/** The fields of an entry a test pins down (details parsed). */
export interface ExpectedEntry {
  action: string;
  outcome: 'success' | 'failure';
  actor_type: 'user' | 'system' | 'anonymous';
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

/** Asserts the entry has exactly these fields (id and at are only checked for shape). */
export function assertEntry(row: AuditRow | undefined, expected: ExpectedEntry): void {
  assert.ok(row, `no ${expected.action} entry`);
  const { id, at, details, ...rest } = row;
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  assert.equal(typeof at, 'number');
  const { details: wantDetails, ...want } = expected;
  assert.deepEqual(rest, want);
  assert.deepEqual(JSON.parse(details), wantDetails);
}

/** The one entry there is; fails when there are none or several. */
export async function onlyEntry(t: TestApp): Promise<AuditRow> {
  const rows = await auditEntries(t);
  assert.equal(rows.length, 1, `expected one entry, got ${JSON.stringify(rows.map((r) => r.action))}`);
  return rows[0] as AuditRow;
}

/**
 * Makes the database refuse inserts into `table` whose `column` equals `value` (a real trigger, so
 * a transaction fails at that statement as it would on a constraint). Returns the undo.
 */
export async function refuseInserts(
  t: TestApp,
  table: string,
  column: string,
  value: string,
): Promise<() => Promise<void>> {
  const name = `test_refuse_${uuidv7().replaceAll('-', '').slice(-12)}`;
  const literal = `'${value.replaceAll("'", "''")}'`;
  if (t.dialect === 'sqlite') {
    await sql
      .raw(
        `CREATE TRIGGER ${name} BEFORE INSERT ON ${table} WHEN NEW.${column} = ${literal} ` +
          `BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`,
      )
      .execute(t.ctx.db);
    return async () => {
      await sql.raw(`DROP TRIGGER ${name}`).execute(t.ctx.db);
    };
  }
  await sql
    .raw(
      `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS ` +
        `$$ BEGIN RAISE EXCEPTION 'refused by test trigger'; END $$`,
    )
    .execute(t.ctx.db);
  await sql
    .raw(
      `CREATE TRIGGER ${name} BEFORE INSERT ON ${table} FOR EACH ROW ` +
        `WHEN (NEW.${column} = ${literal}) EXECUTE FUNCTION ${name}()`,
    )
    .execute(t.ctx.db);
  return async () => {
    await sql.raw(`DROP TRIGGER ${name} ON ${table}`).execute(t.ctx.db);
    await sql.raw(`DROP FUNCTION ${name}()`).execute(t.ctx.db);
  };
}
