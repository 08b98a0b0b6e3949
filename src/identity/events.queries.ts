import type { Kysely } from 'kysely';
import { dialectOf } from '../platform/db/dialect.ts';
import type { DB, Db, UserRow } from '../platform/db/schema.ts';

/** The enabled endpoints and what they subscribe to (JSON text): the emitter's one read per change. */
export async function enabledSubscriptions(db: Db): Promise<Array<{ id: string; events: string }>> {
  return db.selectFrom('webhook_endpoints').select(['id', 'events']).where('enabled', '=', 1).execute();
}

/** The user an event is about, as the change left it (read in the change's transaction). */
export async function userForEvent(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The client an `oauth.grant.*` event names (read in the change's transaction). */
export async function clientForEvent(
  db: Db,
  clientId: string,
): Promise<{ client_id: string; name: string } | undefined> {
  return db
    .selectFrom('oauth_clients')
    .select(['client_id', 'name'])
    .where('client_id', '=', clientId)
    .executeTakeFirst();
}

/**
 * Writes an event to the outbox, in the caller's transaction: one row, whatever the number of
 * endpoints. The delivery worker fans it out (src/modules/webhooks/delivery.ts), so the change's
 * transaction writes no per-endpoint rows.
 */
export async function insertEvent(
  db: Db,
  event: { id: string; type: string; payload: string; created_at: number },
): Promise<void> {
  await db
    .insertInto('webhook_events')
    .values({ ...event, fanout_pending: 1 })
    .execute();
}

/** Withdraws an event of this transaction that a more specific one replaces (not fanned out yet). */
export async function deleteEvent(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhook_events').where('id', '=', id).execute();
}

/** Writes an event (the test event) outside the audit path. */
export async function insertBareEvent(
  db: Db,
  event: { id: string; type: string; payload: string; created_at: number },
): Promise<void> {
  // Not fanned out: the caller plans its one attempt itself.
  await db
    .insertInto('webhook_events')
    .values({ ...event, fanout_pending: 0 })
    .execute();
}

/** An outbox row not fanned out yet. */
export interface PendingEvent {
  id: string;
  type: string;
  created_at: number;
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

/** Deletes events older than `before`, fanned out, with nothing pending (their attempts cascade). */
export async function pruneEvents(db: Db, before: number): Promise<number> {
  const r = await db
    .deleteFrom('webhook_events')
    .where('created_at', '<', before)
    .where('fanout_pending', '=', 0)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries')
            .select('id')
            .whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id')
            .where('status', '=', 'pending'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
