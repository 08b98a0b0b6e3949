import { toPublicUser } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { UserRow } from '../../../platform/db/schema.ts';
import type { ListQuery, SortParam, StatsResponse, UserPage } from '../users.schemas.ts';
import { type CursorCodec, invalidCursor } from './cursors.ts';
import {
  countUsers,
  DAY_MS,
  type KeyedRow,
  type KeysetPosition,
  type ListFilters,
  type SortKey,
  selectPage,
} from './users-list.queries.ts';
import { selectStats } from './users-stats.queries.ts';

/**
 * The page answered from rows read with one more than `limit`: the extra row only tells that a next
 * page exists, and the cursor points after the page's last user.
 */
export function userPage<R extends UserRow>(
  rows: R[],
  limit: number,
  total: number,
  cursorAfter: (last: R) => string,
): UserPage {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map(toPublicUser),
    next_cursor: rows.length > limit && last ? cursorAfter(last) : null,
    total,
  };
}

/**
 * Up to `filterFirstMax` matching users, a filtered list reads them through the filter's index and
 * sorts them; beyond it, it walks the sort's index, which carries role, status and created_at, so
 * skipping a non-matching user costs one index entry (~0.15 µs) and a page at least 1 in 1,000
 * dense costs about 20,000 entries at most. The crossover of the two costs is near 1,000 at a
 * million users (docs/users.md). Up to `unnamedMax` unnamed users in a created_after range, a
 * name-sorted list reads them through their own index first (PostgreSQL; selectPage). Mutable
 * only so tests can force every plan on small data and bench/users-scale.ts can A/B them.
 */
export const LIST_TUNING = { filterFirstMax: 1000, unnamedMax: 2000 };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** GET /api/v1/users: one keyset page, with the total for the filters. */
export async function listUsers(ctx: AppContext, codec: CursorCodec, query: ListQuery): Promise<UserPage> {
  const sort = query.sort as SortParam;
  const desc = sort.startsWith('-');
  const key = (desc ? sort.slice(1) : sort) as SortKey;
  const filters: ListFilters = {
    role: query.role,
    status: query.status,
    createdFrom: instant(query.created_after, 'created_after'),
    createdUntil: instant(query.created_before, 'created_before'),
    kind: query.kind,
  };
  const after = query.cursor === undefined ? null : readListCursor(codec, query.cursor, sort, key);
  const dialect = ctx.database.dialect;
  const page = { key, desc, after, filters, limit: query.limit + 1, unnamedMax: LIST_TUNING.unnamedMax };
  const cursorAfter = (last: KeyedRow) => codec.encode({ k: 'list', s: sort, v: last.sort_key, i: last.id });
  const filtered = Object.values(filters).some((v) => v !== undefined);
  if (!filtered) {
    // No filter, no plan to choose: the total rides in the page's statement (one round trip on
    // PostgreSQL instead of two, docs/benchmarks.md); only an empty page asks for it alone.
    const rows = await selectPage(ctx.db, dialect, {
      ...page,
      filterFirst: false,
      withTotal: true,
    });
    const first = rows[0];
    const total = first === undefined ? await countUsers(ctx.db, dialect, filters) : Number(first.total);
    return userPage(rows, query.limit, total, cursorAfter);
  }
  // A filtered page is read one of two ways, chosen by how many users match: count first.
  const total = await countUsers(ctx.db, dialect, filters);
  const rows =
    total === 0
      ? []
      : await selectPage(ctx.db, dialect, { ...page, filterFirst: total <= LIST_TUNING.filterFirstMax });
  return userPage(rows, query.limit, total, cursorAfter);
}

function instant(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new ApiError('validation_failed', {
      detail: `querystring/${field} must be an ISO 8601 date-time`,
      errors: [{ path: `/${field}`, message: 'must be an ISO 8601 date-time' }],
    });
  }
  return ms;
}

function readListCursor(codec: CursorCodec, token: string, sort: SortParam, key: SortKey): KeysetPosition {
  const c = codec.decode(token);
  if (c.k !== 'list') throw invalidCursor('The cursor does not belong to this list');
  if (c.s !== sort) throw invalidCursor('The cursor was made for another sort order');
  const numeric = key === 'created_at' || key === 'last_login_at';
  const valueOk = numeric ? Number.isSafeInteger(c.v) : typeof c.v === 'string' && c.v.length <= 1000;
  if (!valueOk || typeof c.i !== 'string' || c.i.length > 64) throw invalidCursor();
  return { value: c.v as string | number, id: c.i };
}

/** GET /api/v1/users/stats. */
export async function userStats(ctx: AppContext, now = Date.now()): Promise<StatsResponse> {
  const raw = await selectStats(ctx.db, ctx.database.dialect, now, [DAY_MS, 7 * DAY_MS, 30 * DAY_MS]);
  const stats: StatsResponse = {
    total: 0,
    by_role: { admin: 0, user: 0 },
    by_status: { active: 0, invited: 0, disabled: 0 },
    by_kind: { person: 0, service: raw.services },
    created: { last_24h: raw.created[0], last_7d: raw.created[1], last_30d: raw.created[2] },
    active: { last_24h: raw.active[0], last_7d: raw.active[1], last_30d: raw.active[2] },
  };
  for (const { role, status, n } of raw.counts) {
    stats.total += n;
    stats.by_role[role] += n;
    stats.by_status[status] += n;
  }
  stats.by_kind.person = stats.total - stats.by_kind.service;
  return stats;
}

/** A user id from a path: lower-cased when it is a UUID, null when it cannot be one (→ 404). */
export function parseUserId(raw: string): string | null {
  const id = raw.toLowerCase();
  return UUID.test(id) ? id : null;
}
