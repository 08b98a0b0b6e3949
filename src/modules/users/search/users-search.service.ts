import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../../kernel/context.types.ts';
import type { DB } from '../../../platform/db/schema.ts';
import { type CursorCodec, invalidCursor } from '../list/cursors.ts';
import { countUsers } from '../list/users-list.queries.ts';
import { userPage } from '../list/users-list.service.ts';
import type { SearchQuery, UserPage } from '../users.schemas.ts';
import {
  postgresSearch,
  type RankedRow,
  type SearchEngine,
  type SearchFilters,
  type SearchTerm,
  searchTerm,
  type Tier,
} from './users-search.queries.ts';
import { sqliteSearch } from './users-search-sqlite.queries.ts';
import {
  amongIds,
  countAmongIds,
  countMatchesWithin,
  emailAtBudget,
  exactEmailMatch,
  rankedPage,
  tierPastByFilters,
  walkOn,
  walkTierTo,
} from './users-search-walk.queries.ts';

/*
 * Search plans (docs/users.md). Results are ordered by (tier, email); a cursor is a position in
 * that order. A plan is chosen per request:
 * - few users pass the role/status filters (counters say so): rank those, sort;
 * - the substring index finds few candidates: rank those, sort;
 * - otherwise matches are common: walk the email index tier by tier, checking each row, within a
 *   budget of rows; a tier that turns out sparse is finished from the index instead.
 * Each costs a few thousand rows at most, at any depth. Counting works the same way: a common
 * match is counted by a short walk, a rare one through the index.
 */

/**
 * Plan thresholds. Up to `filterFirstMax` users passing the filters are ranked and sorted; up to
 * `filteredScanMax`, a walk made sparse by the filters finishes among those users; at
 * most `candidateMax` candidates are ranked and sorted; a tier walk reads
 * `walkBudget` rows before the tier is judged sparse; a counting walk reads `countBudget` rows
 * before the count goes to the index. Mutable only so tests can force every plan on small data.
 */
export const SEARCH_TUNING = {
  filterFirstMax: 5000,
  filteredScanMax: 50_000,
  candidateMax: 2000,
  walkBudget: 8000,
  countBudget: 50_000,
};

/**
 * A query holding an '@' (an e-mail address, typically) is tried by index probes first
 * (SearchEngine.atCandidates); a sparse tier 1 is read from the index of name words in email order
 * and a count stops when that index alone shows the cap (SearchEngine.tierOneInOrder, reachesCap).
 * On SQLite (SqliteSwitches), the email-prefix range is counted before candidates are listed and
 * serves as reachesCap (under nameWords too), and names are tested for the query before its
 * word starts. Always on; bench/users-scale.ts turns them off for its same-run A/B.
 */
export const SEARCH_SWITCHES = { atProbes: true, nameWords: true, emailPrefix: true, containsFirst: true };
/** The tier walk's budget on PostgreSQL (SQLite uses walkBudget). */
const POSTGRES_WALK_BUDGET = 2000;

/** `total` of a search counts matches up to this many (docs/users.md). */
export const SEARCH_TOTAL_CAP = 1000;

interface Position {
  tier: Tier;
  email: string;
}

/** GET /api/v1/users/search. */
export async function searchUsers(
  ctx: AppContext,
  codec: CursorCodec,
  query: SearchQuery,
): Promise<UserPage> {
  const term = searchTerm(query.q);
  const filters: SearchFilters = { role: query.role, status: query.status };
  const binding = createHash('sha256').update(term.qf).digest('base64url').slice(0, 12);
  const after = query.cursor === undefined ? null : readSearchCursor(codec, query.cursor, binding);
  const engine = (
    ctx.database.dialect === 'postgres' ? postgresSearch(ctx.db) : sqliteSearch(ctx.db, SEARCH_SWITCHES)
  )(term);
  const db = ctx.db;
  const want = query.limit + 1;
  const filtered = filters.role !== undefined || filters.status !== undefined;

  let rows: RankedRow[];
  let total: (() => Promise<number>) | null = null;
  const passing = filtered ? await countUsers(db, engine.dialect, filters) : null;
  const few = passing !== null && passing <= SEARCH_TUNING.filterFirstMax;
  if (few) {
    rows = await rankedPage(db, engine, filters, null, after, want);
    total = async () => (await countWalk(db, engine, filters, null)) ?? 0;
  } else {
    // Under three characters the index answers only through a vocabulary scan whose cost grows
    // with how common the query is: such queries start with the walk, which is cheap exactly then.
    const probed =
      SEARCH_SWITCHES.atProbes && term.qf.includes('@')
        ? await engine.atCandidates(SEARCH_TUNING.candidateMax)
        : null;
    const ids = probed ?? (await engine.candidateIds(SEARCH_TUNING.candidateMax, SEARCH_SWITCHES.nameWords));
    if (ids) {
      rows = ids.length === 0 ? [] : await rankedPage(db, engine, filters, ids, after, want);
      // The listed ids may be a superset (PostgreSQL's short-grams index): count exact matches.
      total = () => countAmongIds(db, engine, filters, ids);
    } else {
      rows = await tieredPage(db, engine, term, filters, passing, after, want);
    }
  }
  const count =
    after === null && rows.length < want
      ? rows.length // a first page that is not full holds every match
      : await (total ?? (() => countMatches(db, engine, term, filters, passing)))();

  return userPage(rows, query.limit, Math.min(count, SEARCH_TOTAL_CAP), (last) =>
    codec.encode({ k: 'search', b: binding, r: Number(last.rank), e: last.email }),
  );
}

function readSearchCursor(codec: CursorCodec, token: string, binding: string): Position {
  const c = codec.decode(token);
  if (c.k !== 'search' || c.b !== binding) throw invalidCursor('The cursor was made for another search');
  if ((c.r !== 0 && c.r !== 1 && c.r !== 2) || typeof c.e !== 'string' || c.e.length > 320) {
    throw invalidCursor();
  }
  return { tier: c.r, email: c.e };
}

/** Matches up to the cap: a walk when they are common, the index when they are rare. */
async function countMatches(
  db: Kysely<DB>,
  engine: SearchEngine,
  term: SearchTerm,
  filters: SearchFilters,
  passing: number | null,
): Promise<number> {
  // Few users pass the filters: count among them (through the filter's index).
  if (passing !== null && passing <= SEARCH_TUNING.filteredScanMax) {
    return (await countWalk(db, engine, filters, null)) ?? 0;
  }
  // Common name words (PostgreSQL) or email prefixes (SQLite): the cap is reached without reading
  // any posting list.
  if (SEARCH_SWITCHES.nameWords && (await engine.reachesCap(filters, SEARCH_TOTAL_CAP))) {
    return SEARCH_TOTAL_CAP;
  }
  if (term.length >= 3) {
    const n = await engine.countIndexed(filters, SEARCH_TOTAL_CAP);
    if (n !== null) return n;
  }
  const walked = await countWalk(db, engine, filters, SEARCH_TUNING.countBudget);
  if (walked !== null) return walked;
  return (
    (await engine.countIndexed(filters, SEARCH_TOTAL_CAP)) ??
    (await countWalk(db, engine, filters, null)) ??
    0
  );
}

/**
 * Counts matches up to the cap reading at most `budget` users (all when null); null when the
 * budget ran out first (the matches are rare: the index counts them cheaply).
 */
async function countWalk(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  budget: number | null,
): Promise<number | null> {
  const n = await countMatchesWithin(db, engine, filters, budget, SEARCH_TOTAL_CAP);
  if (budget === null || n >= SEARCH_TOTAL_CAP) return n;
  const users = await countUsers(db, engine.dialect, {});
  return users <= budget ? n : null;
}

/** The page for common matches: tier 0 by its key, tiers 1 and 2 by walking the email order. */
async function tieredPage(
  db: Kysely<DB>,
  engine: SearchEngine,
  term: SearchTerm,
  filters: SearchFilters,
  passing: number | null,
  after: Position | null,
  want: number,
): Promise<RankedRow[]> {
  const rows: RankedRow[] = [];
  if (after === null) rows.push(...(await exactEmailMatch(db, term, filters)));
  for (const tier of [1, 2] as const) {
    if (rows.length >= want || (after !== null && after.tier > tier)) continue;
    const from = after !== null && after.tier === tier ? after.email : null;
    rows.push(...(await walkTier(db, engine, filters, passing, tier, from, want - rows.length)));
  }
  return rows;
}

/**
 * The next rows of one tier in email order: walks up to walkBudget rows of the email index; when
 * that does not fill the page the tier is sparse, and the rest comes from the index candidates.
 */
async function walkTier(
  db: Kysely<DB>,
  engine: SearchEngine,
  filters: SearchFilters,
  passing: number | null,
  tier: 1 | 2,
  from: string | null,
  need: number,
): Promise<RankedRow[]> {
  // Where the budget ends: the email walkBudget entries on.
  // PostgreSQL evaluates the predicates per index entry several times slower than SQLite.
  const budget = Math.min(
    SEARCH_TUNING.walkBudget,
    engine.dialect === 'postgres' ? POSTGRES_WALK_BUDGET : Infinity,
  );
  const bound = await emailAtBudget(db, engine, from, budget);
  const walked = await walkTierTo(db, engine, filters, tier, from, bound, need);
  if (walked.length >= need || bound === null) return walked;

  // The tier is sparser than the budget allows for; finish it the cheapest way available.
  const left = need - walked.length;
  let more: RankedRow[] | null = null;
  if (passing !== null && passing <= SEARCH_TUNING.filteredScanMax) {
    // The filters made it sparse and few users pass them: among those, through the filter index.
    more = await tierPastByFilters(db, engine, filters, tier, bound, left);
  }
  if (more === null && tier === 1 && SEARCH_SWITCHES.nameWords) {
    // PostgreSQL reads tier 1 in email order from its index of name words, unless too common.
    more = await engine.tierOneInOrder(filters, bound, left);
  }
  if (more === null) {
    const listed = await engine.listTier(tier, SEARCH_TUNING.candidateMax, 'sparse');
    more = listed
      ? await amongIds(db, engine, filters, tier, listed, bound, left)
      : await walkOn(db, engine, filters, tier, bound, left);
  }
  return [...walked, ...more];
}
