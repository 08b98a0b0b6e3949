import { sql } from 'kysely';
import type { Db } from '../platform/db/schema.ts';

/*
 * The statements `gatehouse doctor` sends (docs/operations.md, "gatehouse doctor"). Read-only:
 * the doctor never writes, never migrates.
 */

/** PostgreSQL's own clock, in epoch milliseconds (clock_timestamp: the moment of the call, not the transaction's). */
export async function postgresClockMs(db: Db): Promise<number> {
  const result = await sql<{
    ms: number | string;
  }>`select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`.execute(db);
  return Number(result.rows[0]?.ms);
}

/** One confirmed TOTP factor's sealed secret, to see whether the configured key opens it. */
export async function oneSealedTotpSecret(
  db: Db,
): Promise<{ user_id: string; secret_box: string } | undefined> {
  return db
    .selectFrom('mfa_totp')
    .select(['user_id', 'secret_box'])
    .where('confirmed_at', 'is not', null)
    .limit(1)
    .executeTakeFirst();
}
