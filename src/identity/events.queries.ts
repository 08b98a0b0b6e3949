import type { Db, UserRow } from '../db/schema.ts';

/** The enabled endpoints and what they subscribe to (JSON text): the emitter's one read per change. */
export async function enabledSubscriptions(db: Db): Promise<Array<{ id: string; events: string }>> {
  return db.selectFrom('webhook_endpoints').select(['id', 'events']).where('enabled', '=', 1).execute();
}

/** The user an event is about, as the change left it (read in the change's transaction). */
export async function userForEvent(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Writes an event and its first attempt to each endpoint, in the caller's transaction. */
export async function insertEvent(
  db: Db,
  event: { id: string; type: string; payload: string; created_at: number },
  deliveries: Array<{ id: string; endpoint_id: string }>,
): Promise<void> {
  await db.insertInto('webhook_events').values(event).execute();
  if (deliveries.length === 0) return;
  await db
    .insertInto('webhook_deliveries')
    .values(
      deliveries.map((d) => ({
        id: d.id,
        endpoint_id: d.endpoint_id,
        event_id: event.id,
        attempt: 1,
        status: 'pending' as const,
        response_code: null,
        error: null,
        duration_ms: null,
        created_at: event.created_at,
        next_attempt_at: event.created_at,
        locked_until: null,
        locked_by: null,
      })),
    )
    .execute();
}

/** Withdraws an event of this transaction that a more specific one replaces (its deliveries cascade). */
export async function deleteEvent(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('event_id', '=', id).execute();
  await db.deleteFrom('webhook_events').where('id', '=', id).execute();
}
