import type { Insertable, Selectable } from 'kysely';
import type { Db, SigningKeysTable } from '../db/schema.ts';

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

/** Current keys and those retired after `cutoff`, newest first. */
export async function keysRetiredAfter(db: Db, cutoff: number): Promise<Array<Selectable<SigningKeysTable>>> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', cutoff)]))
    .orderBy('created_at', 'desc')
    .execute();
}
