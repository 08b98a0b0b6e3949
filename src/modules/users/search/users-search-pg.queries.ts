import { type Kysely, type RawBuilder, sql } from 'kysely';
import { WORD_CHARS } from '../../../platform/db/migrations/20261126150000_users_name_words.ts';
import type { DB } from '../../../platform/db/schema.ts';
import type { RankedRow, SearchTerm } from './users-search.types.ts';

/*
 * PostgreSQL's ways of listing search candidates (users-search.queries.ts, postgresSearch).
 *
 * Search for a query holding an '@' (typically a whole e-mail address), by index probes instead of
 * trigram posting lists (pg_trgm splits text at '@' and '.', so such a query costs the lists of
 * every common word in it: "gmx", "com", a first name). It relies on what every stored email is
 * (normalizeEmail, src/identity/email.ts): exactly one '@'. So an email E = A@B contains the query
 * L@D (one '@') exactly when A ends with L and B starts with D: a range of the index on the reversed
 * local part (users_email_local_rev_idx), checked against D. A name contains it only if the name
 * holds an '@' at all (no case folding makes one): the partial index users_name_at_idx lists those.
 * Both reads stop after `cap + 1` entries, so the cost is bounded whatever the data; more than `cap`
 * on either side and the caller takes the general path.
 */

/** The ids of every match of an '@' query when both probes find at most `cap`, else null. */
export async function atQueryCandidates(
  db: Kysely<DB>,
  t: SearchTerm,
  cap: number,
): Promise<string[] | null> {
  const at = t.qf.indexOf('@');
  // Two '@' match no stored email; names alone would do, but such queries are rare: general path.
  if (at < 0 || t.qf.indexOf('@', at + 1) >= 0) return null;
  const local = [...t.qf.slice(0, at)].reverse().join('');
  const domain = t.qf.slice(at + 1);
  const key = sql`(reverse(split_part(email, '@', 1)) collate "C")`;
  const limit = sql.lit(cap + 1);
  const rows = await sql<{ side: number; id: string; hit: boolean }>`
    select 1 as side, id, starts_with(split_part(email, '@', 2), ${domain}) as hit from (
      select id, email from users where ${key} >= ${local} and ${key} < ${`${local}\u{10FFFF}`}
      limit ${limit}) e
    union all
    select 2, id, strpos(lower(name), ${t.qf}) > 0 from (
      select id, name from users where strpos(name, '@') > 0 limit ${limit}) n`.execute(db);
  const ids = new Set<string>();
  const read = [0, 0, 0];
  for (const r of rows.rows) {
    read[r.side]! += 1;
    if (r.hit) ids.add(r.id);
  }
  return read[1]! > cap || read[2]! > cap ? null : [...ids];
}

/**
 * The ids of rows meeting an indexable predicate when there are at most `cap`, else null. A GIN
 * bitmap costs its whole posting lists whatever the LIMIT, so the planner's row estimate (EXPLAIN,
 * from the column statistics; planning only) first rules out the common cases.
 */
export async function listIfFew(
  db: Kysely<DB>,
  predicate: RawBuilder<boolean>,
  limit: number,
  known: 'sparse' | 'unknown',
  /** An equivalent predicate the planner estimates better, when there is one. */
  estimate: RawBuilder<boolean> = predicate,
): Promise<string[] | null> {
  // Each listed row is a heap visit (a GIN bitmap is rechecked): list fewer than SQLite does and
  // walk the index-only email order sooner (measured: sorting thousands of candidates loses).
  const cap = Math.min(limit, POSTGRES_LIST_MAX);
  const plan = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`explain (format json)
    select id from users where ${estimate}`.execute(db);
  const estimated = plan.rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? Number.POSITIVE_INFINITY;
  // A walk that came back short showed the rows are sparse, so the estimate gets more benefit of
  // the doubt there; but not unlimited: a GIN scan of common trigrams costs tens of milliseconds
  // (three of them for a tier-1 list), wasted when the list then runs past the cap anyway.
  if (estimated > cap * (known === 'sparse' ? SPARSE_PLANNER_SLACK : PLANNER_SLACK)) return null;
  const rows = await sql<{
    id: string;
  }>`select id from users where ${predicate} limit ${sql.lit(cap + 1)}`.execute(db);
  return rows.rows.length > cap ? null : rows.rows.map((r) => r.id);
}

/** PostgreSQL lists at most this many candidates. */
export const POSTGRES_LIST_MAX = 500;

/** How far the planner's estimate may overshoot before a list is not even tried. */
const PLANNER_SLACK = 2;
/**
 * The same after a walk found the rows sparse. The estimate of a word-prefix list ran 2.4× over
 * the actual count at a million users ("mary-jan": 10,192 for 4,313; "anderson": 10,084 for 3,698).
 */
const SPARSE_PLANNER_SLACK = 10;

/**
 * Past `max` name-word entries for a query, tier 1 is not read from user_name_words: they would all
 * be read and sorted, and matches that common are found sooner by walking on in email order.
 * Mutable only so tests can force the fallback on small data.
 */
export const NAME_WORDS = { max: 20_000 };

/** The name words starting with the query: a range of user_name_words_word_idx. */
function wordRange(t: SearchTerm): RawBuilder<boolean> {
  return sql<boolean>`(word >= ${t.qf} and word < ${t.upper} and starts_with(word, ${t.qf}))`;
}

/**
 * Tier 1 (an email or a name word starting with the query, not the exact email) after `past` in
 * email order, up to `limit`, with `filters` (role/status conditions on unqualified columns). The
 * name-word side is a range of user_name_words read on the index alone (it carries email, role and
 * status) and sorted; the email side is a range of the "C" email index, already in order. Exact, so
 * the page is the walk's. One statement; null when the query has more than NAME_WORDS.max name-word
 * entries (the page was then made from some of them only) or is longer than the stored words.
 */
export async function tierOneByWords(
  db: Kysely<DB>,
  t: SearchTerm,
  filters: RawBuilder<unknown>[],
  past: string | null,
  limit: number,
): Promise<RankedRow[] | null> {
  if (t.length > WORD_CHARS) return null;
  const email = sql`email collate "C"`;
  const after = [sql`email <> ${t.qf}`, ...(past === null ? [] : [sql`${email} > ${past}`])];
  const prefix = sql`${email} >= ${t.qf} and ${email} < ${t.upper} and starts_with(email, ${t.qf})`;
  const n = sql.lit(limit);
  // The count comes on a row of its own (left join): it is there even when the page is empty. A user
  // holding several matching words is one place on the page (group by).
  const result = await sql<RankedRow & { listed: number }>`with words as materialized (
      select email from user_name_words where ${and([wordRange(t), ...filters])}
      limit ${sql.lit(NAME_WORDS.max + 1)})
    select l.listed, p.* from (select count(*) as listed from words) l left join lateral (
      select u.*, 1 as rank from (
        select e from (
          (select email as e from words where ${and(after)} group by email order by ${email} limit ${n})
          union
          (select email from users where ${prefix} and ${and([...after, ...filters])}
            order by ${email} limit ${n})
        ) c order by e collate "C" limit ${n}
      ) w join users u on u.email = w.e
    ) p on true
    order by p.email collate "C"`.execute(db);
  if (Number(result.rows[0]?.listed ?? 0) > NAME_WORDS.max) return null;
  return result.rows.filter((r) => r.id !== null);
}

/** Name-word entries read to count the users holding them (a user can hold several). */
const NAME_WORD_COUNT_ENTRIES = 2000;

/**
 * The distinct users passing `filters` among the first NAME_WORD_COUNT_ENTRIES entries of the
 * query's name words: each is a match, so this is a lower bound of the matches.
 */
export async function nameWordUsers(
  db: Kysely<DB>,
  t: SearchTerm,
  filters: RawBuilder<unknown>[],
): Promise<number> {
  if (t.length > WORD_CHARS) return 0;
  const row = await sql<{ n: number }>`select count(distinct email) as n from (select email
    from user_name_words where ${and([wordRange(t), ...filters])}
    limit ${sql.lit(NAME_WORD_COUNT_ENTRIES)}) s`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

function and(conditions: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return conditions.length === 0 ? sql`1 = 1` : sql.join(conditions, sql` and `);
}
