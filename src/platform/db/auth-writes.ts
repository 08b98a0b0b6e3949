import type pg from 'pg';

/**
 * What this process has written to the rows that authenticate a request (`users`, `sessions`),
 * seen at the driver, so that no call site has to remember to report its write. The session
 * cache (src/identity/tokens/session-cache.ts) reads it; other writers are seen through PostgreSQL's
 * triggers (migration 20261125060000) or SQLite's `PRAGMA data_version`.
 */
export interface AuthWrites {
  /** Bumped when such a write starts and again when it is committed (or rolled back). */
  readonly version: number;
  /** Writes started and not yet committed or rolled back: while any is open, cached rows may be stale. */
  readonly open: number;
  /**
   * SQLite: a number that changes whenever another connection (another process: the CLI) commits
   * to the file; it throws when the file cannot be read. Absent on PostgreSQL.
   */
  otherWriters?: () => number;
}

// A statement that changes an existing user or session row. Inserts create rows nobody has cached;
// an upsert may change one. Kysely quotes identifiers; hand-written SQL may not.
const WRITES_AUTH_ROWS =
  /\b(?:update\s+(?:only\s+)?|delete\s+from\s+(?:only\s+)?|truncate\s+(?:table\s+)?)(?:"?public"?\.)?"?(?:users|sessions)"?(?![\w"])|\binsert\s+into\s+(?:"?public"?\.)?"?(?:users|sessions)"?(?![\w"])[\s\S]*\bon\s+conflict\b/i;
const BEGINS = /^\s*(?:begin|start\s+transaction)\b/i;
const ENDS = /^\s*(?:commit|end|rollback)\b(?!\s+to\b)/i;

/** Tracks one connection: `statement` before each statement runs, its result after it settles. */
export interface ConnectionWatch {
  /** Returns what to call once the statement has settled (ran or failed), if anything. */
  statement(text: string): (() => void) | undefined;
  /** The connection is gone: an open transaction on it never commits. */
  ended(): void;
}

/** The counters, and a watch per connection that reports into them. */
export function createAuthWrites(): { writes: AuthWrites; connection(): ConnectionWatch } {
  const writes: { version: number; open: number; otherWriters?: () => number } = { version: 0, open: 0 };
  const started = () => {
    writes.open++;
    writes.version++;
  };
  const settled = () => {
    writes.version++;
    writes.open--;
  };
  const connection = (): ConnectionWatch => {
    let inTransaction = false;
    let dirty = false;
    const endTransaction = () => {
      if (dirty) settled();
      inTransaction = false;
      dirty = false;
    };
    return {
      statement(text) {
        if (BEGINS.test(text)) inTransaction = true;
        else if (ENDS.test(text)) return endTransaction;
        else if (WRITES_AUTH_ROWS.test(text)) {
          if (!inTransaction) {
            started();
            return settled;
          }
          if (!dirty) {
            dirty = true;
            started();
          } else writes.version++;
        }
        return undefined;
      },
      ended: endTransaction,
    };
  };
  return { writes, connection };
}

/** Makes a pooled pg client report every statement it runs. */
export function watchPgClient(client: pg.PoolClient, watch: ConnectionWatch): void {
  client.on('end', () => watch.ended());
  const query = client.query;
  client.query = ((...args: unknown[]): unknown => {
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
    const after = typeof text === 'string' ? watch.statement(text) : undefined;
    const result: unknown = Reflect.apply(query, client, args);
    if (after !== undefined) {
      if (result instanceof Promise) result.then(after, after);
      else after();
    }
    return result;
  }) as typeof client.query;
}
