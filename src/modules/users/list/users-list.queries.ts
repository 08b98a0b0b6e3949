import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../../../platform/db/dialect.ts';
import type { DB, Role, UserKind, UserRow, UserStatus } from '../../../platform/db/schema.ts';

/*
 * Listing users at scale: keyset pages over one index per sort, and totals from the per-day
 * counters of the users_scale migration (never a count over the whole table).
 */

export const DAY_MS = 86_400_000;

export type SortKey = 'created_at' | 'email' | 'name' | 'last_login_at';

export interface ListFilters {
  role?: Role | undefined;
  status?: UserStatus | undefined;
  /** created_at >= this (epoch ms). */
  createdFrom?: number | undefined;
  /** created_at < this (epoch ms). */
  createdUntil?: number | undefined;
  /** docs/api.md §22: people or service accounts (not kept in the counters: see countSql). */
  kind?: UserKind | undefined;
}

/** Where a keyset page starts: after the row with this sort key and id. */
export interface KeysetPosition {
  value: string | number;
  id: string;
}

export interface PageRequest {
  key: SortKey;
  desc: boolean;
  after: KeysetPosition | null;
  filters: ListFilters;
  limit: number;
  /**
   * Few users match the filters: read them through the filter's index and sort them, instead of
   * walking the sort's index past everyone else.
   */
  filterFirst: boolean;
  /**
   * PostgreSQL, name sort with a created_after bound: read the unnamed users in the range through
   * their own index (users_unnamed_created_idx) when at most this many are there (0: never).
   */
  unnamedMax: number;
  /** Only users with a name (the page goes on past the unnamed ones, read first). */
  namedOnly?: boolean;
  /** Answer countUsers' figure beside every row as `total` (a subquery run once per statement). */
  withTotal?: boolean;
}

export type KeyedRow = UserRow & { sort_key: string | number; total?: number | string };

/**
 * The SQL of a sort key. The same expressions define the indexes (users_scale migration):
 * "C" order on PostgreSQL, ASCII-folded names, never-logged-in users as the oldest logins.
 */
export function sortKeySql(dialect: DialectName, key: SortKey): RawBuilder<unknown> {
  const pg = dialect === 'postgres';
  switch (key) {
    case 'created_at':
      return sql.raw('created_at');
    case 'email':
      return sql.raw(pg ? 'email collate "C"' : 'email');
    case 'name':
      return sql.raw(pg ? 'lower(name collate "C")' : 'lower(name)');
    case 'last_login_at':
      return sql.raw('coalesce(last_login_at, -1)');
  }
}

/** Emails are unique, so the email key needs no id tie-breaker. */
function hasTieBreaker(key: SortKey): boolean {
  return key !== 'email';
}

/** One page of users in keyset order (limit rows, the caller asks for one more to see if more follow). */
export async function selectPage(
  db: Kysely<DB>,
  dialect: DialectName,
  req: PageRequest,
): Promise<KeyedRow[]> {
  if (unnamedFirst(dialect, req)) {
    const unnamed = await selectUnnamed(db, req);
    if (unnamed !== null) {
      if (unnamed.length >= req.limit) return unnamed;
      const named = await selectPage(db, dialect, {
        ...req,
        after: null,
        namedOnly: true,
        unnamedMax: 0,
        limit: req.limit - unnamed.length,
      });
      return [...unnamed, ...named];
    }
  }
  const sqlite = dialect === 'sqlite';
  // SQLite has no statistics unless ANALYZE ran; unary + takes a term away from the planner's
  // index choice so it uses the index this request was planned for (a no-op on the value).
  const hintKey = sqlite && req.filterFirst ? '+' : '';
  const hintFilter = sqlite && !req.filterFirst ? '+' : '';
  const key = sql`${sql.raw(hintKey)}${sortKeySql(dialect, req.key)}`;
  const conditions: RawBuilder<unknown>[] = filterConditions(req.filters, req.key, hintFilter);
  if (req.after) conditions.push(keysetCondition(dialect, key, req));
  if (req.namedOnly) conditions.push(sql`${key} > ''`);
  const dir = sql.raw(req.desc ? 'desc' : 'asc');
  const order = hasTieBreaker(req.key)
    ? sql`${key} ${dir}, ${sql.raw(hintKey)}id ${dir}`
    : sql`${key} ${dir}`;
  const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
  const sortKey = sortKeySql(dialect, req.key);
  const total = req.withTotal ? sql`, ${countSql(dialect, req.filters) ?? sql`0`} as total` : sql``;
  if (req.filterFirst || conditions.length === 0) {
    const result = await sql<KeyedRow>`
      select *, ${sortKey} as sort_key${total} from users ${where} order by ${order} limit ${req.limit}`.execute(
      db,
    );
    return result.rows;
  }
  // A filtered walk: find the page's ids on the sort index alone (it carries role and status), then
  // read just those rows. SQLite's email sort must name its covering index (the unique index on
  // email alone would make it read every row it skips), and the limit is a literal so its planner
  // knows the page is small (with a bound parameter it may scan users to spare a sort).
  const from = sqlite && req.key === 'email' ? sql`users indexed by users_email_walk_idx` : sql`users`;
  const result = await sql<KeyedRow>`
    select u.*, ${sortKey} as sort_key${total}
    from (select id from ${from} ${where} order by ${order} limit ${sql.lit(req.limit)}) page
    join users u on u.id = page.id
    order by ${hasTieBreaker(req.key) ? sql`${sortKey} ${dir}, u.id ${dir}` : sql`${sortKey} ${dir}`}`.execute(
    db,
  );
  return result.rows;
}

/*
 * Users without a name all tie on the name sort: '' comes first, and among them the id decides,
 * which for ids Gatehouse mints (UUIDv7) is creation order. So a created_after filter on the name
 * sort would walk past every older unnamed user before the first match (2 % of a million users:
 * 20,000 index entries). PostgreSQL reads them instead through a partial index ordered by
 * created_at, and sorts the few in the range; SQLite walks its index ten times cheaper per entry
 * and does not need it (docs/benchmarks.md, Users at scale).
 */
function unnamedFirst(dialect: DialectName, req: PageRequest): boolean {
  return (
    dialect === 'postgres' &&
    req.key === 'name' &&
    !req.desc &&
    !req.filterFirst &&
    req.unnamedMax > 0 &&
    req.filters.createdFrom !== undefined &&
    (req.after === null || req.after.value === '')
  );
}

/** The page's unnamed users, in id order after the cursor; null when more than unnamedMax are in the range. */
async function selectUnnamed(db: Kysely<DB>, req: PageRequest): Promise<KeyedRow[] | null> {
  const conditions = [sql`name = ''`, ...filterConditions(req.filters, req.key, '')];
  if (req.after) conditions.push(sql`id > ${req.after.id}`);
  // Materialized: the range is read through the partial index whatever the planner thinks of the
  // id order, then counted and sorted; only the page's few rows are then read (by primary key).
  const result = await sql<KeyedRow & { n: number | string }>`
    with range as materialized (
      select id from users where ${sql.join(conditions, sql` and `)} limit ${sql.lit(req.unnamedMax + 1)}),
    page as materialized (select id from range order by id limit ${req.limit})
    select u.*, '' as sort_key, (select count(*) from range) as n
    from page join users u on u.id = page.id
    order by u.id`.execute(db);
  const first = result.rows[0];
  if (first !== undefined && Number(first.n) > req.unnamedMax) return null;
  return result.rows.map(({ n: _, ...row }) => row);
}

function keysetCondition(
  dialect: DialectName,
  key: RawBuilder<unknown>,
  req: PageRequest,
): RawBuilder<unknown> {
  const after = req.after!;
  const op = sql.raw(req.desc ? '<' : '>');
  if (!hasTieBreaker(req.key)) return sql`${key} ${op} ${after.value}`;
  if (dialect === 'postgres') return sql`(${key}, id) ${op} (${after.value}, ${after.id})`;
  // SQLite seeks an expression index only on a plain comparison of the expression, not on a row value.
  const eq = sql.raw(req.desc ? '<=' : '>=');
  return sql`${key} ${eq} ${after.value} and (${key} ${op} ${after.value} or id ${op} ${after.id})`;
}

/**
 * `role in (every role)`: always true (a check constraint), but it lets a status-only filter use
 * the (role, status, created_at) index as two ranges instead of reading every row.
 */
export const ANY_ROLE = sql`role in ('admin', 'user')`;

function filterConditions(f: ListFilters, key: SortKey, hint: string): RawBuilder<unknown>[] {
  const out: RawBuilder<unknown>[] = [];
  const h = sql.raw(hint);
  if (f.role !== undefined) out.push(sql`${h}role = ${f.role}`);
  if (f.status !== undefined) out.push(sql`${h}status = ${f.status}`);
  if (f.kind !== undefined) out.push(sql`${h}kind = ${f.kind}`);
  if (f.status !== undefined && f.role === undefined && hint === '') out.push(ANY_ROLE);
  // A created_at range on the created_at sort is a range of that very index: no hint.
  const ch = sql.raw(key === 'created_at' ? '' : hint);
  if (f.createdFrom !== undefined) out.push(sql`${ch}created_at >= ${f.createdFrom}`);
  if (f.createdUntil !== undefined) out.push(sql`${ch}created_at < ${f.createdUntil}`);
  return out;
}

/** Day number of an epoch-ms instant, as the counters' `created_at / 86400000` computes it. */
export function dayOf(ms: number): number {
  return Math.trunc(ms / DAY_MS);
}

/**
 * Users matching the filters, exactly: whole days from the counters, the partial days at either
 * end of a created_at range counted through the index. One statement, so one snapshot.
 */
export async function countUsers(db: Kysely<DB>, dialect: DialectName, f: ListFilters): Promise<number> {
  const count = countSql(dialect, f);
  if (count === null) return 0;
  const row = await sql<{ n: number | string }>`select ${count} as n`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

/** countUsers' expression, to select alone or beside a page's rows; null when no user can match. */
export function countSql(dialect: DialectName, f: ListFilters): RawBuilder<unknown> | null {
  if (f.kind === undefined) return countEveryKind(dialect, f);
  // The counters do not split by kind. Service accounts are few and indexed (users_service_idx):
  // counted exactly; people are everyone the counters hold minus them.
  const services = serviceCount(f);
  if (f.kind === 'service') return services;
  const everyone = countEveryKind(dialect, f);
  return everyone === null ? null : sql`(${everyone} - ${services})`;
}

function serviceCount(f: ListFilters): RawBuilder<unknown> {
  const conditions = [sql`kind = 'service'`];
  if (f.role !== undefined) conditions.push(sql`role = ${f.role}`);
  if (f.status !== undefined) conditions.push(sql`status = ${f.status}`);
  if (f.createdFrom !== undefined) conditions.push(sql`created_at >= ${f.createdFrom}`);
  if (f.createdUntil !== undefined) conditions.push(sql`created_at < ${f.createdUntil}`);
  return sql`(select count(*) from users where ${sql.join(conditions, sql` and `)})`;
}

function countEveryKind(dialect: DialectName, f: ListFilters): RawBuilder<unknown> | null {
  const from = f.createdFrom === undefined ? undefined : Math.max(0, f.createdFrom);
  const until = f.createdUntil;
  if (until !== undefined && (until <= 0 || (from !== undefined && until <= from))) return null;
  const parts: RawBuilder<unknown>[] = [];
  const bucket = (days: RawBuilder<unknown>) => parts.push(bucketSum(dialect, f, days));
  const exact = (lo: number, hi: number) => parts.push(exactCount(f, lo, hi));
  if (from === undefined && until === undefined) bucket(sql`1 = 1`);
  else if (from !== undefined && until === undefined) {
    const d = dayOf(from);
    exact(from, (d + 1) * DAY_MS);
    bucket(sql`day > ${d}`);
  } else if (from === undefined && until !== undefined) {
    const d = dayOf(until);
    bucket(sql`day < ${d}`);
    exact(d * DAY_MS, until);
  } else if (from !== undefined && until !== undefined) {
    const d1 = dayOf(from);
    const d2 = dayOf(until);
    if (d1 === d2) exact(from, until);
    else {
      exact(from, (d1 + 1) * DAY_MS);
      bucket(sql`day > ${d1} and day < ${d2}`);
      exact(d2 * DAY_MS, until);
    }
  }
  return sql`(${sql.join(parts, sql` + `)})`;
}

function bucketSum(dialect: DialectName, f: ListFilters, days: RawBuilder<unknown>): RawBuilder<unknown> {
  const conditions = [days];
  if (f.role !== undefined) conditions.push(sql`role = ${f.role}`);
  if (f.status !== undefined) conditions.push(sql`status = ${f.status}`);
  const sum = sql`coalesce(sum(n), 0)`;
  // PostgreSQL's sum(bigint) is numeric; bring it back to bigint (a number in JavaScript).
  const total = dialect === 'postgres' ? sql`cast(${sum} as bigint)` : sum;
  return sql`(select ${total} from user_counts where ${sql.join(conditions, sql` and `)})`;
}

function exactCount(f: ListFilters, lo: number, hi: number): RawBuilder<unknown> {
  const conditions = [sql`created_at >= ${lo}`, sql`created_at < ${hi}`];
  if (f.role !== undefined) conditions.push(sql`role = ${f.role}`);
  if (f.status !== undefined) conditions.push(sql`status = ${f.status}`);
  return sql`(select count(*) from users where ${sql.join(conditions, sql` and `)})`;
}
