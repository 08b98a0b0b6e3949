import type { AuditAction, AuditOutcome, AuditRow } from '../../identity/index.ts';
import type { Db } from '../../platform/db/schema.ts';

/** Filters of the audit listing; all optional, combined with AND. */
export interface AuditFilter {
  actorId?: string;
  targetId?: string;
  action?: AuditAction;
  outcome?: AuditOutcome;
  /** Inclusive lower bound, epoch ms. */
  from?: number;
  /** Exclusive upper bound, epoch ms. */
  to?: number;
}

/** A keyset position: entries strictly older than (at, id) come next. */
export interface AuditPosition {
  at: number;
  id: string;
}

/** One page of entries, newest first, keyset-paged on (at, id). */
export async function listAudit(
  db: Db,
  filter: AuditFilter,
  limit: number,
  after: AuditPosition | null,
): Promise<AuditRow[]> {
  let query = db.selectFrom('audit_log').selectAll();
  if (filter.actorId !== undefined) query = query.where('actor_id', '=', filter.actorId);
  if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId);
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome);
  if (filter.from !== undefined) query = query.where('at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('at', '<', filter.to);
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]),
    );
  }
  return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** The current e-mail address of each of these users that still exists (id → email). */
export async function emailsOfUsers(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'email']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.email]));
}
