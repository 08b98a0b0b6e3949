import type { Kysely } from 'kysely';

/** Indexes for the periodic pruning of expired refresh tokens and spent throttle counters. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('refresh_tokens_expires_at_idx')
    .on('refresh_tokens')
    .column('expires_at')
    .execute();
  await db.schema
    .createIndex('throttle_counters_window_idx')
    .on('throttle_counters')
    .column('window_started_at')
    .execute();
}

/** Drops the two indexes. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('throttle_counters_window_idx').ifExists().execute();
  await db.schema.dropIndex('refresh_tokens_expires_at_idx').ifExists().execute();
}
