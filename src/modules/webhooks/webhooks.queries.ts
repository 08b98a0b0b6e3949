import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, WebhookDeliveriesTable, WebhookEndpointsTable } from '../../platform/db/schema.ts';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable> & { type: string };

/** Every endpoint, oldest first. */
export async function listEndpoints(db: Db): Promise<EndpointRow[]> {
  return db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function findEndpoint(db: Db, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertEndpoint(db: Db, row: Insertable<WebhookEndpointsTable>): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

export async function updateEndpoint(
  db: Db,
  id: string,
  patch: Updateable<WebhookEndpointsTable>,
): Promise<void> {
  await db.updateTable('webhook_endpoints').set(patch).where('id', '=', id).execute();
}

/** Deletes an endpoint (its attempts cascade); false when there was none. */
export async function deleteEndpoint(db: Db, id: string): Promise<boolean> {
  await db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
  const r = await db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** One page of an endpoint's attempts, newest first (ids are UUIDv7: time-ordered). */
export async function listDeliveries(
  db: Db,
  endpointId: string,
  limit: number,
  beforeId: string | null,
): Promise<DeliveryRow[]> {
  let q = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
    .selectAll('d')
    .select('v.type')
    .where('d.endpoint_id', '=', endpointId);
  if (beforeId !== null) q = q.where('d.id', '<', beforeId);
  return q.orderBy('d.id', 'desc').limit(limit).execute();
}

export async function findDelivery(db: Db, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
    .selectAll('d')
    .select('v.type')
    .where('d.endpoint_id', '=', endpointId)
    .where('d.id', '=', id)
    .executeTakeFirst();
}

/** The pending attempt of an event to an endpoint, if one is planned. */
export async function pendingAttemptOf(
  db: Db,
  endpointId: string,
  eventId: string,
): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
    .selectAll('d')
    .select('v.type')
    .where('d.endpoint_id', '=', endpointId)
    .where('d.event_id', '=', eventId)
    .where('d.status', '=', 'pending')
    .executeTakeFirst();
}

/** The highest attempt number of an event to an endpoint. */
export async function lastAttemptNumber(db: Db, endpointId: string, eventId: string): Promise<number> {
  const r = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.max('attempt').as('n'))
    .where('endpoint_id', '=', endpointId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}
