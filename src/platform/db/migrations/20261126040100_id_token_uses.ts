import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * "An ID token signs in once" (docs/api.md §16): the SHA-256 of every ID token that
 * POST /api/v1/idp/verify accepted, kept until its `exp` plus the 60 s clock tolerance. The primary
 * key is the reservation: the sign-in inserts first, so of two uses (on any instance) exactly one
 * gets the row. Expired rows are deleted by the idp module's timer (src/modules/idp/replay.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('id_token_uses')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('id_token_uses_expires_idx').on('id_token_uses').column('expires_at').execute();
}

/** Drops the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('id_token_uses').ifExists().execute();
}
