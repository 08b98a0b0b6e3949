import type { Kysely } from 'kysely';

/*
 * The language a queued mail is written in (docs/api.md §24, docs/languages.md), stored with it so
 * its delivery sends `Content-Language` however late it goes out. Null for older rows (English).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('outbox').addColumn('lang', 'text').execute();
}

/** Drops the column again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('outbox').dropColumn('lang').execute();
}
