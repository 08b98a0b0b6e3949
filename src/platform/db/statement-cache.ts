import type SQLite from 'better-sqlite3';

/** Gatehouse sends a few hundred fixed statement texts (Kysely builds the same text per query shape). */
const STATEMENT_CACHE_SIZE = 512;

/**
 * SQLite statements reused by SQL text: Kysely's SQLite driver prepares every query anew, and
 * preparing was 8–15% of an OAuth grant's CPU (docs/benchmarks.md, "Optimizations kept"). One cache
 * per handle, cleared with it; a statement still iterating (a stream) is busy, so a fresh one is made
 * then. The oldest text goes first when full.
 */
export function statementCache() {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(handle: SQLite.Database, text: string): SQLite.Statement {
      const cached = statements.get(text);
      if (cached !== undefined && !cached.busy) return cached;
      const statement = handle.prepare(text);
      if (cached === undefined) {
        if (statements.size >= STATEMENT_CACHE_SIZE)
          statements.delete(statements.keys().next().value as string);
        statements.set(text, statement);
      }
      return statement;
    },
    clear: () => statements.clear(),
  };
}
