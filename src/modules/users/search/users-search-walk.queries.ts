import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../../platform/db/schema.ts';
import {
  filterConditions,
  type RankedRow,
  type SearchEngine,
  type SearchFilters,
  type SearchTerm,
  type Tier,
} from './users-search.queries.ts';

/*
 * The SQL of the search plans (users-search.service.ts chooses among them): ranking a small set,
 * counting, and walking the email index tier by tier.
 */

function and(conditions: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return sql.join(conditions, sql` and `);
}

/** Every user (null), none (an empty list), or those listed. */
function among(ids: string[] | null): RawBuilder<unknown> {
  if (ids === null) return sql`1 = 1`;
  return ids.length === 0 ? sql`1 = 0` : sql`id in (${sql.join(ids)})`;
}

/** Ranks the users among `ids` (every user when null) and returns the page after `after`. */
export async function rankedPage(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  ids: string[] | null,
  after: { tier: Tier; email: string } | null,
  want: number,
): Promise<RankedRow[]> {
  const outer = [sql`rank < 3`];
  if (after) outer.push(sql`(rank, ${engine.email}) > (${after.tier}, ${after.email})`);
  const result = await sql<RankedRow>`select * from (
      select *, ${engine.rank()} as rank from users
      where ${and([among(ids), ...filterConditions(filters, '')])}
    ) ranked where ${and(outer)}
    order by rank, ${engine.email} limit ${want}`.execute(db);
  return result.rows;
}

/** Exact matches among listed ids (the index may list a superset) that pass the filters. */
export async function countAmongIds(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  ids: string[],
): Promise<number> {
  const conditions = [among(ids), engine.matches(), ...filterConditions(filters, '')];
  const row = await sql<{ n: number }>`select count(*) as n from users
    where ${and(conditions)}`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

/** Matches passing the filters, up to `cap`, among the first `budget` users in email order (all when null). */
export async function countMatchesWithin(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  budget: number | null,
  cap: number,
): Promise<number> {
  // The budgeted walk reads the email index alone (it carries every column the predicates use).
  const index = engine.dialect === 'sqlite' ? sql`users indexed by users_email_walk_idx` : sql`users`;
  const source =
    budget === null
      ? sql`users`
      : sql`(select email, name, role, status from ${index} order by ${engine.email} limit ${sql.lit(budget)})`;
  const result = await sql<{ n: number }>`select count(*) as n from (select 1 from ${source} u
    where ${and([engine.matches(), ...filterConditions(filters, '')])}
    limit ${cap}) s`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/** Tier 0: the user whose email is the query, when it passes the filters. */
export async function exactEmailMatch(
  db: Kysely<DB>,
  term: SearchTerm,
  filters: SearchFilters,
): Promise<RankedRow[]> {
  const conditions = [sql`email = ${term.qf}`, ...filterConditions(filters, '')];
  const exact = await sql<RankedRow>`select *, 0 as rank from users
      where ${and(conditions)}`.execute(db);
  return exact.rows;
}

/** Everything after `email` in the engine's email order (everything when null). */
function pastEmail(engine: SearchEngine, email: string | null): RawBuilder<unknown> {
  return email === null ? sql`1 = 1` : sql`${engine.email} > ${email}`;
}

/**
 * The email `budget` entries on from `from` in the email index, or null when there are fewer. An
 * index-only probe whose cost is bounded by the budget, not by how deep the page is.
 */
export async function emailAtBudget(
  db: Kysely<DB>,
  engine: SearchEngine,
  from: string | null,
  budget: number,
): Promise<string | null> {
  const probe = await sql<{
    e: string;
  }>`select ${engine.email} as e from users where ${pastEmail(engine, from)}
    order by ${engine.email} limit 1 offset ${budget - 1}`.execute(db);
  return probe.rows[0]?.e ?? null;
}

/** The tier's rows after `from`, up to `bound` (to the end when null), walking the email index. */
export async function walkTierTo(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  tier: 1 | 2,
  from: string | null,
  bound: string | null,
  limit: number,
): Promise<RankedRow[]> {
  const within = [pastEmail(engine, from), engine.inTier(tier), ...filterConditions(filters, engine.noIndex)];
  if (bound !== null) within.push(sql`${engine.email} <= ${bound}`);
  return (await walk(db, engine, tier, within, limit)).rows;
}

/** The tier's rows after `past` among the users passing the filters, through the filter's index. */
export async function tierPastByFilters(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  tier: 1 | 2,
  past: string,
  limit: number,
): Promise<RankedRow[]> {
  const conditions = [
    sql`${sql.raw(engine.noIndex)}${pastEmail(engine, past)}`,
    engine.inTier(tier),
    ...filterConditions(filters, ''),
  ];
  return sortedTier(db, engine, tier, conditions, limit);
}

/** The tier's rows after `past` among listed ids, in email order. */
export async function amongIds(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  tier: 1 | 2,
  ids: string[],
  past: string,
  limit: number,
): Promise<RankedRow[]> {
  if (ids.length === 0) return [];
  const conditions = [
    among(ids),
    pastEmail(engine, past),
    engine.inTier(tier),
    ...filterConditions(filters, ''),
  ];
  return sortedTier(db, engine, tier, conditions, limit);
}

/** A tier's rows meeting `conditions`, few enough to sort by email. */
async function sortedTier(
  db: Kysely<DB>,
  engine: SearchEngine,
  tier: 1 | 2,
  conditions: RawBuilder<unknown>[],
  limit: number,
): Promise<RankedRow[]> {
  // Unary + keeps SQLite from walking the email index to avoid the (small) sort.
  const result = await sql<RankedRow>`select *, ${tier} as rank from users
    where ${and(conditions)} order by ${sql.raw(engine.noIndex)}${engine.email} limit ${limit}`.execute(db);
  return result.rows;
}

/** Walks on from `past` without a budget (the candidates are too many to sort, or none can be had). */
export async function walkOn(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  tier: 1 | 2,
  past: string,
  limit: number,
): Promise<RankedRow[]> {
  return walkTierTo(db, engine, filters, tier, past, null, limit);
}

/**
 * Rows meeting `conditions` in email order, found on the email index alone (it carries name, role
 * and status; SQLite is told to use it over the narrower unique index), then fetched by email.
 */
function walk(
  db: Kysely<DB>,
  engine: SearchEngine,
  tier: 1 | 2,
  conditions: RawBuilder<unknown>[],
  limit: number,
) {
  const from = engine.dialect === 'sqlite' ? sql`users indexed by users_email_walk_idx` : sql`users`;
  const order = engine.dialect === 'postgres' ? sql`w.e collate "C"` : sql`w.e`;
  // A literal limit: with a bound one SQLite's planner may scan users to spare sorting the page.
  return sql<RankedRow>`select u.*, ${tier} as rank
    from (select email as e from ${from} where ${and(conditions)}
      order by ${engine.email} limit ${sql.lit(limit)}) w
    join users u on u.email = w.e
    order by ${order}`.execute(db);
}
