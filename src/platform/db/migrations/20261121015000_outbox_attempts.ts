import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * `outbox.last_attempt_at`: when the last delivery attempt ended. The mailer health check compares
 * the newest failed attempt with the newest delivery to tell "SMTP is failing now" from "one old
 * message is retrying".
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('outbox')
    .addColumn('last_attempt_at', bigintType(dialectOf(db)))
    .execute();
}

/** Drops the column again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('outbox').dropColumn('last_attempt_at').execute();
}
