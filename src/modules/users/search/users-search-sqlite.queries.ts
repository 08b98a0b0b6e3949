import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../../platform/db/schema.ts';
import {
  and,
  ESCAPE,
  filterConditions,
  likeEscape,
  type SearchEngine,
  type SearchFilters,
  type SearchTerm,
  tiers,
} from './users-search.queries.ts';

/*
 * SQLite's side of user search (the engine shared parts live in users-search.queries.ts): its
 * engine, sqliteSearch, the e-mail address probe and FTS5 expressions.
 */

/** SQLite's plans that bench/users-scale.ts --ab turns off (SEARCH_SWITCHES). */
export interface SqliteSwitches {
  /** The email-prefix range, counted index-only, rules out lists bound to overflow and shows the cap. */
  emailPrefix: boolean;
  /** The word-start tests run only on names holding the query at all. */
  containsFirst: boolean;
}

/**
 * The local part's last characters kept before the '@' by SQLite's two email-tail indexes, longest
 * first: users_email_tail_idx (6) and users_email_tail3_idx (3); see the migrations.
 */
export const EMAIL_TAILS = [6, 3] as const;

/**
 * SQLite's probes for a query L@D holding one '@' (the PostgreSQL ones: users-search-pg.queries.ts).
 * SQLite has no reverse(), so its indexes key each email by the last k characters of the local part
 * (k in EMAIL_TAILS), the '@' and the domain: an email containing L@D (|L| ≥ k) has a key starting
 * with L's last k characters, '@', D. The longest k that L allows reads the fewest entries; a local
 * part under 3 characters keeps the general plans. Candidates only: the caller ranks them with
 * exact predicates.
 */
export async function sqliteAtCandidates(
  db: Kysely<DB>,
  t: SearchTerm,
  cap: number,
): Promise<string[] | null> {
  const at = t.qf.indexOf('@');
  const tail = EMAIL_TAILS.find((k) => at >= k);
  if (tail === undefined || t.qf.indexOf('@', at + 1) >= 0 || !t.ascii) return null;
  const prefix = t.qf.slice(at - tail);
  // The index's own expression, so the planner uses it (users_email_tail_idx, users_email_tail3_idx).
  const key = sql.raw(`substr(email, max(instr(email, '@') - ${tail}, 1))`);
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

/**
 * SQLite: the FTS5 trigram table users_fts (docs/users.md). Exact predicates use LIKE and lower()
 * for ASCII queries (both fold ASCII in C) and the Unicode gh_fold() function otherwise.
 */
export function sqliteSearch(
  db: Kysely<DB>,
  switches: SqliteSwitches = { emailPrefix: true, containsFirst: true },
): (t: SearchTerm) => SearchEngine {
  return (t) => {
    const name = t.ascii ? sql`name` : sql`gh_fold(name)`;
    const lowered = t.ascii ? sql`lower(name)` : sql`gh_fold(name)`;
    const e = likeEscape(t.qf);
    const starts = sql`(${name} like ${`${e}%`} ${ESCAPE} or ${name} like ${`% ${e}%`} ${ESCAPE}
      or ${name} like ${`%-${e}%`} ${ESCAPE})`;
    // A walk tests nearly only names without the query: one LIKE rejects them, not three
    // (SQLite evaluates AND and OR lazily; each LIKE with a leading % scans the whole name).
    const tier1 = switches.containsFirst
      ? sql<boolean>`(substr(email, 1, ${t.length}) = ${t.qf}
        or (${name} like ${`%${e}%`} ${ESCAPE} and ${starts}))`
      : sql<boolean>`(substr(email, 1, ${t.length}) = ${t.qf} or ${starts})`;
    const all = sql<boolean>`(instr(email, ${t.qf}) > 0 or instr(${lowered}, ${t.qf}) > 0)`;
    const ids = (expr: string) => sql`select m.user_id from users_fts f
      join users_search_rowids m on m.rowid = f.rowid where users_fts match ${expr}`;
    const matchExpr = async (): Promise<string | 'none' | null> => {
      const p = await phrase(db, t.qf);
      return p === 'none' || p === null ? p : `{e n} : ${p}`;
    };
    // Users whose email starts with the query (a lower bound of the matches); read once per
    // request without filters, and only when the switch is on.
    let unfiltered: Promise<number> | undefined;
    const prefixUsers = (filters: SearchFilters): Promise<number> => {
      if (!switches.emailPrefix) return Promise.resolve(0);
      const f = filterConditions(filters, '');
      if (f.length > 0) return emailPrefixUsers(db, t, f);
      unfiltered ??= emailPrefixUsers(db, t, []);
      return unfiltered;
    };
    /** True when the email-prefix range alone shows more than `cap` candidates to list. */
    const overflows = async (cap: number) => cap < EMAIL_PREFIX_ENTRIES && (await prefixUsers({})) > cap;
    return {
      dialect: 'sqlite',
      email: sql<string>`email`,
      noIndex: '+',
      ...tiers(t, tier1, all),
      async listTier(tier, cap) {
        const limit = sql.lit(cap + 1);
        if (tier === 2) {
          const expr = await matchExpr();
          if (expr === null) return null;
          if (expr === 'none') return [];
          const rows = await sql<{ user_id: string }>`${ids(expr)} limit ${limit}`.execute(db);
          return rows.rows.length > cap ? null : rows.rows.map((r) => r.user_id);
        }
        if (await overflows(cap)) return null;
        const parts: string[] = [];
        for (const s of [`\u0002${t.qf}`, ` ${t.qf}`, `-${t.qf}`]) {
          const p = await phrase(db, s);
          if (p === null) return null;
          if (p !== 'none') parts.push(p);
        }
        const found = new Set<string>();
        const byEmail = await sql<{ id: string }>`select id from users
          where email >= ${t.qf} and email < ${t.upper} limit ${limit}`.execute(db);
        for (const r of byEmail.rows) found.add(r.id);
        if (parts.length > 0 && found.size <= cap) {
          const byName = await sql<{
            user_id: string;
          }>`${ids(`n : (${parts.join(' OR ')})`)} limit ${limit}`.execute(db);
          for (const r of byName.rows) found.add(r.user_id);
        }
        return found.size > cap ? null : [...found];
      },
      async atCandidates(cap) {
        return sqliteAtCandidates(db, t, cap);
      },
      // Three characters and more: FTS5 lists candidates cheaply (it stops past the cap).
      // The email-prefix range is read first: past the cap, FTS5's list would be thrown away.
      async candidateIds(cap) {
        if (t.length < 3) return null;
        if (await overflows(cap)) return null;
        const expr = await matchExpr();
        if (expr === 'none') return [];
        if (expr === null) return null;
        const rows = await sql<{ user_id: string }>`${ids(expr)} limit ${cap + 1}`.execute(db);
        return rows.rows.length > cap ? null : rows.rows.map((r) => r.user_id);
      },
      async countIndexed(filters, cap) {
        const expr = await matchExpr();
        if (expr === null) return null;
        if (expr === 'none') return 0;
        const f = filterConditions(filters, 'u.');
        const query =
          f.length === 0
            ? sql<{ n: number }>`select count(*) as n from
                (select 1 from users_fts where users_fts match ${expr} limit ${cap}) s`
            : sql<{ n: number }>`select count(*) as n from (select 1 from users_fts f
                join users_search_rowids m on m.rowid = f.rowid join users u on u.id = m.user_id
                where users_fts match ${expr} and ${and(f)} limit ${cap}) s`;
        return Number((await query.execute(db)).rows[0]?.n ?? 0);
      },
      tierOneInOrder: async () => null,
      reachesCap: async (filters, cap) => (await prefixUsers(filters)) >= cap,
    };
  };
}
