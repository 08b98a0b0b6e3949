import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/**
 * Marks every still-usable one-time link of a user as replaced, whatever its purpose but one. No
 * list of purposes on purpose: a purpose added later is ended by credential events without anyone
 * remembering to list it here. The one exception is `invitation`: docs/api.md §16 ends the
 * account's credentials, and an invitation is not one — it stays usable while its user is
 * `invited` (a credential event that activates or disables the user ends it through that status).
 */
export async function endLiveLinksOfUser(db: Db, userId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('one_time_links')
    .set({ replaced_at: now })
    .where('user_id', '=', userId)
    .where('purpose', '!=', 'invitation')
    .where('used_at', 'is', null)
    .where('replaced_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
