import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../../../platform/db/dialect.ts';
import { SHORT_GRAMS_SOURCE } from '../../../platform/db/migrations/20261121016000_users_scale.ts';
import type { DB, Role, UserStatus } from '../../../platform/db/schema.ts';
import type { RankedRow, SearchTerm } from './users-search.types.ts';
import {
  atQueryCandidates,
  listIfFew,
  nameWordUsers,
  POSTGRES_LIST_MAX,
  tierOneByWords,
} from './users-search-pg.queries.ts';

export type { RankedRow, SearchTerm } from './users-search.types.ts';

/*
 * The SQL of user search (docs/api.md §6), per engine. A match is a case-insensitive substring of the
 * email or the name; its tier is 0 for the exact email, 1 for a prefix of the email or of a word of
 * the name (a word starts the name or follows a space or a hyphen), 2 otherwise. Rows are always
 * re-checked with exact predicates, so the indexes (FTS5 trigrams, pg_trgm) only narrow candidates.
 */

export type Tier = 0 | 1 | 2;

/** Folds a query for matching. */
export function searchTerm(q: string): SearchTerm {
  const qf = q.toLowerCase();
  return { qf, length: [...qf].length, upper: `${qf}\u{10FFFF}`, ascii: /^[\x20-\x7e]*$/.test(qf) };
}

export interface SearchFilters {
  role?: Role | undefined;
  status?: UserStatus | undefined;
}

/** What the search plans need from an engine, for one query. */
export interface SearchEngine {
  readonly dialect: DialectName;
  /** The email order ("C" on PostgreSQL, whatever the database collation). */
  readonly email: RawBuilder<string>;
  /** Prefix that keeps SQLite's planner off a column's index (unary +); empty on PostgreSQL. */
  readonly noIndex: string;
  /** The exact tier of a row (0, 1, 2), or 3 when it does not match. */
  rank(): RawBuilder<number>;
  /** Exact: the row is in this tier. Per-row work only, so a walk keeps its index order. */
  inTier(tier: 1 | 2): RawBuilder<boolean>;
  /** Exact: the row matches. */
  matches(): RawBuilder<boolean>;
  /**
   * The ids that may be in the tier, listed through the indexes when there are at most `cap`;
   * null when there are more, or no index can list them.
   */
  listTier(tier: 1 | 2, cap: number, known: 'sparse' | 'unknown'): Promise<string[] | null>;
  /**
   * The ids of every match (filters ignored) when the index finds at most `cap` of them cheaply;
   * null when there are more, or only a walk can tell. With `words`, an index of name words that
   * already shows more than `cap` matches rules the list out first (PostgreSQL; SQLite rules it
   * out by the email-prefix range under its own switch).
   */
  candidateIds(cap: number, words: boolean): Promise<string[] | null>;
  /**
   * The ids of every match of a query holding an '@' (a whole e-mail address, typically) found by
   * index probes, when there are at most `cap`; null when the engine has no such probe, or more.
   */
  atCandidates(cap: number): Promise<string[] | null>;
  /** Matches passing the filters, up to `cap`, through the index; null when it cannot serve. */
  countIndexed(filters: SearchFilters, cap: number): Promise<number | null>;
  /**
   * Tier 1's rows after `past` in email order, read in that order from an index of name words;
   * null when the engine has none (SQLite) or the query's name words are too many to sort.
   */
  tierOneInOrder(filters: SearchFilters, past: string | null, limit: number): Promise<RankedRow[] | null>;
  /**
   * True when one index range alone shows `cap` matches passing the filters: PostgreSQL's name
   * words, SQLite's emails starting with the query.
   */
  reachesCap(filters: SearchFilters, cap: number): Promise<boolean>;
}

export const ESCAPE = sql.raw(`escape '\\'`);

/** A literal in a PostgreSQL regular expression: an escaped non-alphanumeric is itself. */
function regexEscape(s: string): string {
  return s.replace(/[^a-z0-9\u0080-\u{10FFFF}]/giu, (c) => `\\${c}`);
}

export function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export function tiers(
  t: SearchTerm,
  tier1: RawBuilder<boolean>,
  all: RawBuilder<boolean>,
): Pick<SearchEngine, 'rank' | 'inTier' | 'matches'> {
  return {
    rank: () =>
      sql<number>`case when email = ${t.qf} then 0 when ${tier1} then 1 when ${all} then 2 else 3 end`,
    inTier: (tier) =>
      tier === 1
        ? sql<boolean>`(email <> ${t.qf} and ${tier1})`
        : sql<boolean>`(email <> ${t.qf} and not ${tier1} and ${all})`,
    matches: () => all,
  };
}

/** role/status conditions; `prefix` qualifies the columns or carries SQLite's unary +. */
export function filterConditions(filters: SearchFilters, prefix: string): RawBuilder<unknown>[] {
  const p = sql.raw(prefix);
  const out: RawBuilder<unknown>[] = [];
  if (filters.role !== undefined) out.push(sql`${p}role = ${filters.role}`);
  if (filters.status !== undefined) out.push(sql`${p}status = ${filters.status}`);
  // Always true, but lets a status-only filter use the (role, status, created_at) index.
  if (filters.status !== undefined && filters.role === undefined && prefix !== '+') {
    out.push(sql`${p}role in ('admin', 'user')`);
  }
  return out;
}

export function and(conditions: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return conditions.length === 0 ? sql`1 = 1` : sql.join(conditions, sql` and `);
}

/** PostgreSQL: pg_trgm GIN indexes on email and lower(name), the "C" email index for prefixes. */
export function postgresSearch(db: Kysely<DB>): (t: SearchTerm) => SearchEngine {
  return (t) => {
    const name = sql`lower(name)`;
    const email = sql<string>`email collate "C"`;
    // Exact predicates avoid LIKE so a walk keeps the email order instead of a trigram bitmap.
    // A walk tests it on every entry it passes, nearly all of which do not hold the query at all:
    // one lower() and one strpos() reject those before the word-start tests (lower() is the cost).
    const tier1 = sql<boolean>`(starts_with(email, ${t.qf}) or (strpos(${name}, ${t.qf}) > 0
      and (starts_with(${name}, ${t.qf}) or strpos(${name}, ${` ${t.qf}`}) > 0
        or strpos(${name}, ${`-${t.qf}`}) > 0)))`;
    const all = sql<boolean>`(strpos(email, ${t.qf}) > 0 or strpos(${name}, ${t.qf}) > 0)`;
    const p = `%${likeEscape(t.qf)}%`;
    const contains = sql<boolean>`(email like ${p} ${ESCAPE} or ${name} like ${p} ${ESCAPE})`;
    const e = likeEscape(t.qf);
    const grams = sql<boolean>`gh_short_grams(${sql.raw(SHORT_GRAMS_SOURCE)}) @> array[${t.qf}]::text[]`;
    /** An indexable superset of the matches. */
    const indexed = t.length >= 3 ? contains : grams;
    // Matching users shown by the name words; read once per request without filters.
    let unfiltered: Promise<number> | undefined;
    const wordUsers = (filters: SearchFilters): Promise<number> => {
      const f = filterConditions(filters, '');
      if (f.length > 0) return nameWordUsers(db, t, f);
      unfiltered ??= nameWordUsers(db, t, []);
      return unfiltered;
    };
    return {
      dialect: 'postgres',
      email,
      noIndex: '',
      ...tiers(t, tier1, all),
      // pg_trgm serves three characters and more; shorter queries use the short-grams index.
      // The planner's estimate of a trigram LIKE can be 40 times too low ("mary-jan": 198 for
      // 7,500): the name words show "more than the cap" by an index range.
      async candidateIds(cap, words) {
        if (words && (await wordUsers({})) > Math.min(cap, POSTGRES_LIST_MAX)) return null;
        return listIfFew(db, indexed, cap, 'unknown');
      },
      async atCandidates(cap) {
        return atQueryCandidates(db, t, Math.min(cap, POSTGRES_LIST_MAX));
      },
      async listTier(tier, cap, known) {
        if (tier === 2) return listIfFew(db, indexed, cap, known);
        // pg_trgm pads word starts, so even one- and two-character word prefixes use the name
        // index; email prefixes are a range of the "C" email index. The three word starts share
        // one set of padded trigrams: as one regular expression they cost one GIN scan, not three.
        // The planner estimates the LIKE form far better (regexes get a fixed guess), so it asks.
        const emailPrefix = sql`(${email} >= ${t.qf} and ${email} < ${t.upper})`;
        return listIfFew(
          db,
          sql`(${emailPrefix} or ${name} ~ ${`(^|[ -])${regexEscape(t.qf)}`})`,
          cap,
          known,
          sql`(${emailPrefix} or ${name} like ${`${e}%`} ${ESCAPE} or ${name} like ${`% ${e}%`} ${ESCAPE}
            or ${name} like ${`%-${e}%`} ${ESCAPE})`,
        );
      },
      async countIndexed(filters, cap) {
        // From three characters the LIKE is itself exact (and the planner may well scan for a
        // common query): testing `all` too would fold every name twice more.
        const exact = t.length >= 3 ? [contains] : [grams, all];
        const row = await sql<{ n: number }>`select count(*) as n from (select 1 from users
          where ${and([...exact, ...filterConditions(filters, '')])} limit ${cap}) s`.execute(db);
        return Number(row.rows[0]?.n ?? 0);
      },
      tierOneInOrder: (filters, past, limit) =>
        tierOneByWords(db, t, filterConditions(filters, ''), past, limit),
      reachesCap: async (filters, cap) => (await wordUsers(filters)) >= cap,
    };
  };
}
