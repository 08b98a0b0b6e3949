import type { Insertable, Selectable } from 'kysely';
import type { Db, SigningKeysTable } from '../../platform/db/schema.ts';

export async function insertSigningKey(db: Db, row: Insertable<SigningKeysTable>): Promise<void> {
  await db.insertInto('signing_keys').values(row).execute();
}

/** Retires every current key but `kid`. */
export async function retireKeysBut(db: Db, kid: string, now: number): Promise<void> {
  await db
    .updateTable('signing_keys')
    .set({ retired_at: now })
    .where('retired_at', 'is', null)
    .where('kid', '!=', kid)
    .execute();
}

/** Current keys and those retired after `cutoff`, newest first; a revoked key never. */
export async function keysRetiredAfter(db: Db, cutoff: number): Promise<Array<Selectable<SigningKeysTable>>> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', cutoff)]))
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .execute();
}

export async function findSigningKey(
  db: Db,
  kid: string,
): Promise<Pick<Selectable<SigningKeysTable>, 'kid' | 'alg' | 'retired_at' | 'revoked_at'> | undefined> {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'alg', 'retired_at', 'revoked_at'])
    .where('kid', '=', kid)
    .executeTakeFirst();
}

/** Marks a key revoked (and retired, so it can never be a current key again). */
export async function markSigningKeyRevoked(db: Db, kid: string, now: number): Promise<void> {
  await db
    .updateTable('signing_keys')
    .set((eb) => ({ revoked_at: now, retired_at: eb.fn.coalesce('retired_at', eb.val(now)) }))
    .where('kid', '=', kid)
    .execute();
}

/** Which of `kids` are revoked: the cheap poll each instance runs (src/identity/tokens/signing-keys.ts). */
export async function revokedAmong(db: Db, kids: readonly string[]): Promise<string[]> {
  if (kids.length === 0) return [];
  const rows = await db
    .selectFrom('signing_keys')
    .select('kid')
    .where('kid', 'in', kids)
    .where('revoked_at', 'is not', null)
    .execute();
  return rows.map((r) => r.kid);
}
