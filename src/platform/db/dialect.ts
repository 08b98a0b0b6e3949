import { type Kysely, PostgresAdapter } from 'kysely';

/** The two SQL engines Gatehouse runs on. */
export type DialectName = 'sqlite' | 'postgres';

/** Which engine a Kysely instance talks to (migrations and a few queries differ per engine). */
export function dialectOf<T>(db: Kysely<T>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** A unique-constraint (or primary-key) violation on either engine: a concurrent insert won. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Column type for epoch-millisecond timestamps and other 64-bit integers. */
export function bigintType(dialect: DialectName): 'bigint' | 'integer' {
  return dialect === 'postgres' ? 'bigint' : 'integer';
}

/** A table that does not exist (yet): a database that was never migrated, on either engine. */
export function isMissingTable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === '42P01' || (typeof e?.message === 'string' && /^no such table\b/.test(e.message));
}
