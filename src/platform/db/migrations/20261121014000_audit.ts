import { type Kysely, sql } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * The audit trail. No foreign keys on actor or target: an entry must outlive the user it names
 * (a deleted user's history is exactly what an investigation needs).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', ts, (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql.raw(`outcome in ('success', 'failure')`)))
    .addColumn('actor_type', 'text', (c) =>
      c.notNull().check(sql.raw(`actor_type in ('user', 'system', 'anonymous')`)),
    )
    .addColumn('actor_id', 'text')
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('details', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  // Every listing is newest first on (at, id); each filter gets an index that keeps that order.
  await db.schema.createIndex('audit_log_at_idx').on('audit_log').columns(['at', 'id']).execute();
  await db.schema
    .createIndex('audit_log_actor_idx')
    .on('audit_log')
    .columns(['actor_id', 'at', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_log_target_idx')
    .on('audit_log')
    .columns(['target_id', 'at', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_log_action_idx')
    .on('audit_log')
    .columns(['action', 'at', 'id'])
    .execute();
}

/** Drops the audit trail. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_log').ifExists().execute();
}
