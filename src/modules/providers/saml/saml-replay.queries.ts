import type { Db } from '../../../platform/db/schema.ts';

/**
 * Reserves a SAML assertion until `expiresAt` (docs/api.md §23): true when this call inserted it,
 * false when a row already holds it. The primary key decides, on any instance sharing the database.
 */
export async function reserveAssertionUse(db: Db, assertionKey: string, expiresAt: number): Promise<boolean> {
  const result = await db
    .insertInto('saml_assertion_uses')
    .values({ assertion_key: assertionKey, expires_at: expiresAt })
    .onConflict((oc) => oc.column('assertion_key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Deletes the used-assertion rows past their expiry; returns how many. */
export async function deleteExpiredAssertionUses(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('saml_assertion_uses').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
