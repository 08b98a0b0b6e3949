import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * `gatehouse rotate-keys --revoke KID` (docs/operations.md, "A compromised signing key"): a revoked
 * key is never loaded again, so tokens it signed stop verifying and it leaves the JWKS. Additive:
 * an older version ignores the column (docs/upgrading.md, expand/contract).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('signing_keys')
    .addColumn('revoked_at', bigintType(dialectOf(db)))
    .execute();
}

/** Drops the column again (a revoked key would then verify again until its retirement ends: revoke anew). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('signing_keys').dropColumn('revoked_at').execute();
}
