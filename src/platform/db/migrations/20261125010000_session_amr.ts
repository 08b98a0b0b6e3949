import { type Kysely, sql } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * How and when a session's user authenticated, kept on the session so that every access token of
 * it carries the same `amr` (RFC 8176, a JSON array) and `auth_time` (epoch ms), refreshes
 * included. Sessions opened before this migration get `auth_time` = their creation (which it was)
 * and no `amr`: whether they began with a password or a provider is not recorded, so their tokens
 * leave the claim out rather than guess.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('amr', 'text').execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('auth_time', bigintType(dialectOf(db)))
    .execute();
  await sql`update sessions set auth_time = created_at where auth_time is null`.execute(db);
}

/** Drops the columns again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('auth_time').execute();
  await db.schema.alterTable('sessions').dropColumn('amr').execute();
}
