import type { Kysely } from 'kysely';
import { dialectOf } from '../../platform/db/dialect.ts';
import type { DB, Db } from '../../platform/db/schema.ts';

const INSERT_SLICE = 500;

/** An outbox row not fanned out yet. */
export interface PendingEvent {
  id: string;
  type: string;
  created_at: number;
}

/** Whether any event waits for its fan-out: a read, so an idle poll takes no lock. */
export async function anyEventToFanOut(db: Db): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_events')
    .select('id')
    .where('fanout_pending', '=', 1)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Claims up to `limit` events waiting for their fan-out, oldest first, in the caller's transaction,
 * by marking them done in one statement (the caller's inserts commit with the mark, or neither
 * does). The write comes first, so SQLite takes its write lock at once rather than upgrading a read
 * (which another writer's commit could refuse); PostgreSQL skips rows another instance holds.
 */
export async function claimEventsToFanOut(trx: Kysely<DB>, limit: number): Promise<PendingEvent[]> {
  const waiting = trx
    .selectFrom('webhook_events')
    .select('id')
    .where('fanout_pending', '=', 1)
    .orderBy('created_at')
    .limit(limit);
  return trx
    .updateTable('webhook_events')
    .set({ fanout_pending: 0 })
    .where('id', 'in', dialectOf(trx) === 'postgres' ? waiting.forUpdate().skipLocked() : waiting)
    .returning(['id', 'type', 'created_at'])
    .execute();
}

/** Plans the first attempt of each (event, endpoint), due at the event's commit time. */
export async function insertFirstAttempts(
  db: Db,
  rows: Array<{ id: string; endpoint_id: string; event_id: string; created_at: number }>,
): Promise<void> {
  // In slices: each row binds 12 parameters, well under both engines' limits per statement.
  for (let i = 0; i < rows.length; i += INSERT_SLICE) {
    await db
      .insertInto('webhook_deliveries')
      .values(
        rows.slice(i, i + INSERT_SLICE).map((r) => ({
          ...r,
          attempt: 1,
          status: 'pending' as const,
          response_code: null,
          error: null,
          duration_ms: null,
          next_attempt_at: r.created_at,
          locked_until: null,
          locked_by: null,
        })),
      )
      .execute();
  }
}
