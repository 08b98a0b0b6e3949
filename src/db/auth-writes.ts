import type pg from 'pg';

/**
 * What this process has written to the rows that authenticate a request (`users`, `sessions`),
 * seen at the driver, so that no call site has to remember to report its write. The session
 * cache (src/security/session-cache.ts) reads it; other instances learn of the same writes from
 * the PostgreSQL triggers of migration 20261125060000.
 */
export interface AuthWrites {
  /** Bumped when such a write starts and again when it is committed (or rolled back). */
  readonly version: number;
  /** Writes started and not yet committed or rolled back: while any is open, cached rows may be stale. */
  readonly open: number;
}

// A statement that changes an existing user or session row. Inserts create rows nobody has cached;
// an upsert may change one. Kysely quotes identifiers; hand-written SQL may not.
const WRITES_AUTH_ROWS =
  /\b(?:update\s+(?:only\s+)?|delete\s+from\s+(?:only\s+)?|truncate\s+(?:table\s+)?)(?:"?public"?\.)?"?(?:users|sessions)"?(?![\w"])|\binsert\s+into\s+(?:"?public"?\.)?"?(?:users|sessions)"?(?![\w"])[\s\S]*\bon\s+conflict\b/i;
const BEGINS = /^\s*(?:begin|start\s+transaction)\b/i;
const ENDS = /^\s*(?:commit|end|rollback)\b(?!\s+to\b)/i;

/** The counters, and the hook that makes every pooled pg client report into them. */
export function createAuthWrites(): { writes: AuthWrites; watch(client: pg.PoolClient): void } {
  const writes = { version: 0, open: 0 };
  const started = () => {
    writes.open++;
    writes.version++;
  };
  const settled = () => {
    writes.version++;
    writes.open--;
  };

  const watch = (client: pg.PoolClient): void => {
    let inTransaction = false;
    let dirty = false;
    const endTransaction = () => {
      if (dirty) settled();
      inTransaction = false;
      dirty = false;
    };
    // A client that dies inside a transaction never commits it: what it wrote is gone.
    client.on('end', endTransaction);
    const query = client.query;
    client.query = ((...args: unknown[]): unknown => {
      const first = args[0];
      const text =
        typeof first === 'string' ? first : ((first as { text?: unknown } | null)?.text ?? undefined);
      if (typeof text !== 'string') return Reflect.apply(query, client, args);
      let after: (() => void) | undefined;
      if (BEGINS.test(text)) inTransaction = true;
      else if (ENDS.test(text)) after = endTransaction;
      else if (WRITES_AUTH_ROWS.test(text)) {
        if (!inTransaction) {
          started();
          after = settled;
        } else if (!dirty) {
          dirty = true;
          started();
        } else {
          writes.version++;
        }
      }
      const result: unknown = Reflect.apply(query, client, args);
      if (after !== undefined) {
        if (result instanceof Promise) result.then(after, after);
        else after();
      }
      return result;
    }) as typeof client.query;
  };
  return { writes, watch };
}
