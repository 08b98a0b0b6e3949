import type { Db, UserRow } from '../platform/db/schema.ts';

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
