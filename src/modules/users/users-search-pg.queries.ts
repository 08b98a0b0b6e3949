import { type Kysely, type RawBuilder, sql } from 'kysely';
import { WORD_CHARS } from '../../platform/db/migrations/20261126150000_users_name_words.ts';
import type { DB } from '../../platform/db/schema.ts';
import type { RankedRow, SearchTerm } from './users-search.queries.ts';

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
 * Past this many name-word entries for a query, tier 1 is not read from user_name_words: they would
 * all be read and sorted, and matches that common are found sooner by walking on in email order.
 */
export const NAME_WORDS_MAX = 20_000;

/** The name words starting with the query: a range of user_name_words_word_idx. */
function wordRange(t: SearchTerm): RawBuilder<boolean> {
  return sql<boolean>`(word >= ${t.qf} and word < ${t.upper} and starts_with(word, ${t.qf}))`;
}

/**
 * Tier 1 (an email or a name word starting with the query, not the exact email) after `past` in
 * email order, up to `limit`, with `filters` (role/status conditions on unqualified columns). The
 * name-word side is a range of user_name_words read on the index alone (it carries email, role and
 * status), sorted; the email side is a range of the "C" email index, already in order. Exact, so
 * the page is the walk's. Null when the query has more than NAME_WORDS_MAX name-word entries (or is
 * longer than the stored words).
 */
export async function tierOneByWords(
  db: Kysely<DB>,
  t: SearchTerm,
  filters: RawBuilder<unknown>[],
  past: string | null,
  limit: number,
): Promise<RankedRow[] | null> {
  if (t.length > WORD_CHARS) return null;
  const words = [wordRange(t), ...filters];
  const listed = await sql<{ n: number }>`select count(*) as n from (select 1 from user_name_words
    where ${sql.join(words, sql` and `)} limit ${sql.lit(NAME_WORDS_MAX + 1)}) s`.execute(db);
  if (Number(listed.rows[0]?.n ?? 0) > NAME_WORDS_MAX) return null;
  const email = sql`email collate "C"`;
  const after = [sql`email <> ${t.qf}`, ...(past === null ? [] : [sql`${email} > ${past}`]), ...filters];
  const prefix = sql`${email} >= ${t.qf} and ${email} < ${t.upper} and starts_with(email, ${t.qf})`;
  const n = sql.lit(limit);
  const result = await sql<RankedRow>`select u.*, 1 as rank from (
      select e from (
        (select email as e from user_name_words where ${sql.join([...words, ...after], sql` and `)}
          order by ${email} limit ${n})
        union
        (select email from users where ${prefix} and ${sql.join(after, sql` and `)}
          order by ${email} limit ${n})
      ) c order by e collate "C" limit ${n}
    ) w join users u on u.email = w.e
    order by w.e collate "C"`.execute(db);
  return result.rows;
}

/**
 * Whether at least `cap` users passing `filters` have a name word starting with the query (then
 * the search's `total` is the cap). Reads at most 2 × cap index entries: a user can hold several.
 */
export async function nameWordsReach(
  db: Kysely<DB>,
  t: SearchTerm,
  filters: RawBuilder<unknown>[],
  cap: number,
): Promise<boolean> {
  if (t.length > WORD_CHARS) return false;
  const row = await sql<{ n: number }>`select count(distinct email) as n from (select email
    from user_name_words where ${sql.join([wordRange(t), ...filters], sql` and `)}
    limit ${sql.lit(cap * 2)}) s`.execute(db);
  return Number(row.rows[0]?.n ?? 0) >= cap;
}
