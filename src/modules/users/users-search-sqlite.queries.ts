import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../platform/db/schema.ts';
import type { SearchTerm } from './users-search.queries.ts';

/*
 * SQLite's index reads for user search (users-search.queries.ts, sqliteSearch): the e-mail
 * address probe and FTS5 expressions.
 */

/** SQLite's plans that bench/users-scale.ts --ab turns off (SEARCH_SWITCHES). */
export interface SqliteSwitches {
  /** The email-prefix range, counted index-only, rules out lists bound to overflow and shows the cap. */
  emailPrefix: boolean;
  /** The word-start tests run only on names holding the query at all. */
  containsFirst: boolean;
}

/** Characters of the local part kept before the '@' in users_email_tail_idx (migration). */
export const EMAIL_TAIL = 6;

/**
 * SQLite's probes for a query L@D holding one '@' (the PostgreSQL ones: users-search-pg.queries.ts).
 * SQLite has no reverse(), so its index keys each email by the last EMAIL_TAIL characters of the
 * local part, the '@' and the domain: an email containing L@D (|L| ≥ EMAIL_TAIL) has a key starting
 * with L's last characters, '@', D. Candidates only: the caller ranks them with exact predicates.
 */
export async function sqliteAtCandidates(
  db: Kysely<DB>,
  t: SearchTerm,
  cap: number,
): Promise<string[] | null> {
  const at = t.qf.indexOf('@');
  if (at < EMAIL_TAIL || t.qf.indexOf('@', at + 1) >= 0 || !t.ascii) return null;
  const prefix = t.qf.slice(at - EMAIL_TAIL);
  const key = sql.raw(`substr(email, max(instr(email, '@') - ${EMAIL_TAIL}, 1))`);
  const limit = sql.lit(cap + 1);
  const rows = await sql<{ side: number; id: string }>`
    select 1 as side, id from (select id from users where ${key} >= ${prefix}
      and ${key} < ${`${prefix}\u{10FFFF}`} limit ${limit})
    union all
    select 2, id from (select id from users where instr(name, '@') > 0 limit ${limit})`.execute(db);
  const sides = [0, 0, 0];
  for (const r of rows.rows) sides[r.side]! += 1;
  return sides[1]! > cap || sides[2]! > cap ? null : [...new Set(rows.rows.map((r) => r.id))];
}

/** Past this many trigrams sharing a one- or two-character prefix, the set is too common for an OR. */
const MAX_PREFIX_TERMS = 200;

/**
 * An FTS5 expression matching `s` anywhere: a phrase from three characters; below that, the OR of
 * every indexed trigram starting with `s` (the values' trailing U+0001 guarantee there is one).
 * 'none' when nothing can match, null when too many trigrams qualify.
 */
export async function phrase(db: Kysely<DB>, s: string): Promise<string | 'none' | null> {
  if ([...s].length >= 3) return quote(s);
  // fts5vocab reads each listed term's whole doclist, so stop early: common prefixes are walked.
  const rows = await sql<{ term: string }>`select term from users_fts_terms
    where term >= ${s} and term < ${`${s}\u{10FFFF}`} limit ${MAX_PREFIX_TERMS + 1}`.execute(db);
  if (rows.rows.length > MAX_PREFIX_TERMS) return null;
  if (rows.rows.length === 0) return 'none';
  return `(${rows.rows.map((r) => quote(r.term)).join(' OR ')})`;
}

/** An FTS5 string literal: everything inside double quotes is literal, quotes doubled. */
function quote(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

/**
 * Email-range entries read to count the users whose email starts with the query: one more than
 * the candidate list's cap (SEARCH_TUNING.candidateMax), so the count can show it would overflow.
 */
export const EMAIL_PREFIX_ENTRIES = 2001;

/**
 * The users passing `filters` (conditions on unqualified columns) among the first
 * EMAIL_PREFIX_ENTRIES entries of the email range starting with the query. Each is a match (tier 0
 * or 1), so this is a lower bound of the matches, read on the email walk index alone: about 0.1 ms
 * at a million users, where listing those ids reads a row each (2.2 ms for 2,001).
 */
export async function emailPrefixUsers(
  db: Kysely<DB>,
  t: SearchTerm,
  filters: RawBuilder<unknown>[],
): Promise<number> {
  const where = filters.length === 0 ? sql`1 = 1` : sql.join(filters, sql` and `);
  const row = await sql<{ n: number }>`select count(*) as n from (select role, status
    from users indexed by users_email_walk_idx where email >= ${t.qf} and email < ${t.upper}
    limit ${sql.lit(EMAIL_PREFIX_ENTRIES)}) s where ${where}`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}
