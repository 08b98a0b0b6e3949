import type { UserRow } from '../../../platform/db/schema.ts';

// The shapes both engines' search plans share (users-search.queries.ts, users-search-pg.queries.ts),
// apart so the PostgreSQL plans need not import the file that imports them.

/** A query, folded once. */
export interface SearchTerm {
  /** Lower-cased query. */
  qf: string;
  /** Length in code points (what the trigram indexes count). */
  length: number;
  /** Upper bound of the email prefix range: qf followed by the highest code point. */
  upper: string;
  ascii: boolean;
}

export type RankedRow = UserRow & { rank: number };
