import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import {
  filterConditions,
  type RankedRow,
  type SearchEngine,
  type SearchFilters,
} from './users-search.queries.ts';

/** The tier's rows among listed ids, in email order. */
export async function amongIds(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  tier: 1 | 2,
  ids: string[],
  start: RawBuilder<unknown>,
  limit: number,
): Promise<RankedRow[]> {
  if (ids.length === 0) return [];
  const conditions = [
    sql`id in (${sql.join(ids)})`,
    start,
    engine.inTier(tier),
    ...filterConditions(filters, ''),
  ];
  // Unary + keeps SQLite from walking the email index to avoid the (small) sort.
  const result = await sql<RankedRow>`select *, ${tier} as rank from users
    where ${sql.join(conditions, sql` and `)} order by ${sql.raw(engine.noIndex)}${engine.email} limit ${limit}`.execute(
    db,
  );
  return result.rows;
}

/** Walks on from `past` without a budget (the candidates are too many to sort, or none can be had). */
export async function walkOn(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  tier: 1 | 2,
  past: RawBuilder<unknown>,
  limit: number,
): Promise<RankedRow[]> {
  const conditions = [past, engine.inTier(tier), ...filterConditions(filters, engine.noIndex)];
  return (await walk(db, engine, tier, conditions, limit)).rows;
}

/**
 * Rows meeting `conditions` in email order, found on the email index alone (it carries name, role
 * and status; SQLite is told to use it over the narrower unique index), then fetched by email.
 */
export async function walk(
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
    from (select email as e from ${from} where ${sql.join(conditions, sql` and `)}
      order by ${engine.email} limit ${sql.lit(limit)}) w
    join users u on u.email = w.e
    order by ${order}`.execute(db);
}
