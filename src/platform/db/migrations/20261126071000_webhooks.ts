import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * Webhooks (docs/api.md §19). `webhook_endpoints`: where events go, the sealed signing secret (and
 * the previous one, valid until `previous_secret_until` after a rotation), and `failing_since` for
 * the auto-disable after 5 days of failures. `webhook_events`: the outbox, one row per event, written
 * in the transaction of the change. `webhook_deliveries`: one row per attempt (planned or made);
 * a `pending` row with `next_attempt_at` is the schedule, claimed with a lease (`locked_until`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('secret_box', 'text', (c) => c.notNull())
    .addColumn('previous_secret_box', 'text')
    .addColumn('previous_secret_until', ts)
    .addColumn('failing_since', ts)
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_events_created_idx')
    .on('webhook_events')
    .column('created_at')
    .execute();
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) =>
      c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
    )
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('response_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('next_attempt_at', ts)
    .addColumn('locked_until', ts)
    .addColumn('locked_by', 'text')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_endpoint_idx')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_event_idx')
    .on('webhook_deliveries')
    .column('event_id')
    .execute();
}

/** Drops the tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').ifExists().execute();
  await db.schema.dropTable('webhook_events').ifExists().execute();
  await db.schema.dropTable('webhook_endpoints').ifExists().execute();
}
