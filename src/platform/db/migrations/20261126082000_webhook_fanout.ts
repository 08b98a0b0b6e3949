import { type Kysely, sql } from 'kysely';

/**
 * Webhooks (docs/api.md §19): the change's transaction writes one outbox row per event, and the
 * delivery worker fans it out to the subscribed endpoints. `fanout_pending` marks the rows not yet
 * fanned out (1); the partial index holds only those, so the worker finds them without a scan and
 * a fanned-out event leaves it. Rows written before this migration already have their deliveries.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('webhook_events')
    .addColumn('fanout_pending', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('webhook_events_fanout_idx')
    .on('webhook_events')
    .column('created_at')
    .where(sql.ref('fanout_pending'), '=', 1)
    .execute();
}

/** Drops the column and its index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_events_fanout_idx').ifExists().execute();
  await db.schema.alterTable('webhook_events').dropColumn('fanout_pending').execute();
}
