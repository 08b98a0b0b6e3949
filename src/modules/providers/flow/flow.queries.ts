import type { Selectable } from 'kysely';
import { countIdentities } from '../../../identity/index.ts';
import type { Db, IdpFlowsTable } from '../../../platform/db/schema.ts';

export type FlowRow = Selectable<IdpFlowsTable>;

/** Stores a flow's server-side half (replacing a flow of the same browser token, which cannot happen twice). */
export async function insertFlow(db: Db, row: FlowRow): Promise<void> {
  await db.insertInto('idp_flows').values(row).execute();
}

/**
 * Takes a flow out, once: the delete is the consumption, so of two callbacks with one cookie (on any
 * instance) exactly one gets the row. Expired rows are taken too, and refused by the caller.
 */
export async function takeFlow(db: Db, browserHash: string): Promise<FlowRow | undefined> {
  const row = await db
    .selectFrom('idp_flows')
    .selectAll()
    .where('browser_hash', '=', browserHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const result = await db.deleteFrom('idp_flows').where('browser_hash', '=', browserHash).executeTakeFirst();
  return Number(result.numDeletedRows) === 1 ? row : undefined;
}

/** Deletes flows that expired before `now`; returns how many. */
export async function deleteExpiredFlows(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('idp_flows').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The ways a user can sign in that count for "the last one" (docs/api.md §18). */
export async function signInMethods(
  db: Db,
  userId: string,
): Promise<{ password: boolean; passkeys: number; identities: number }> {
  const user = await db
    .selectFrom('users')
    .select('password_hash')
    .where('id', '=', userId)
    .executeTakeFirst();
  const passkeys = await db
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  const identities = await countIdentities(db, userId);
  return {
    password: (user?.password_hash ?? null) !== null,
    passkeys: Number(passkeys.n),
    identities,
  };
}

/** Locks the user's row for the rest of the transaction (PostgreSQL), so two unlinks cannot both pass the count. */
export async function lockUser(db: Db, userId: string, postgres: boolean): Promise<void> {
  const q = db.selectFrom('users').select('id').where('id', '=', userId);
  await (postgres ? q.forUpdate() : q).executeTakeFirst();
}
