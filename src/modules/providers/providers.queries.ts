import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, IdentitiesTable, IdpFlowsTable, IdpProvidersTable } from '../../platform/db/schema.ts';

export type ProviderRow = Selectable<IdpProvidersTable>;
export type FlowRow = Selectable<IdpFlowsTable>;
export type IdentityRow = Selectable<IdentitiesTable>;

/** Every stored provider, by name. */
export function listProviderRows(db: Db): Promise<ProviderRow[]> {
  return db.selectFrom('idp_providers').selectAll().orderBy('name').execute();
}

/** One provider by name. */
export function findProviderRow(db: Db, name: string): Promise<ProviderRow | undefined> {
  return db.selectFrom('idp_providers').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Inserts a provider; a taken name is a unique violation. */
export async function insertProviderRow(db: Db, row: Insertable<IdpProvidersTable>): Promise<void> {
  await db.insertInto('idp_providers').values(row).execute();
}

/** Updates a provider; false when there is none of that name. */
export async function updateProviderRow(
  db: Db,
  name: string,
  set: Updateable<IdpProvidersTable>,
): Promise<boolean> {
  const result = await db.updateTable('idp_providers').set(set).where('name', '=', name).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes a provider; false when there is none of that name. */
export async function deleteProviderRow(db: Db, name: string): Promise<boolean> {
  const result = await db.deleteFrom('idp_providers').where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

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

/** A user's linked identities, oldest first. */
export function listIdentities(db: Db, userId: string): Promise<IdentityRow[]> {
  return db
    .selectFrom('identities')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('linked_at')
    .orderBy('id')
    .execute();
}

/** The identity of (issuer, subject), whoever holds it. */
export function findIdentityBySubject(
  db: Db,
  issuer: string,
  subject: string,
): Promise<IdentityRow | undefined> {
  return db
    .selectFrom('identities')
    .selectAll()
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

/** Links an identity; a unique violation when (issuer, subject) is taken. */
export async function insertIdentityRow(db: Db, row: IdentityRow): Promise<void> {
  await db.insertInto('identities').values(row).execute();
}

/** Removes one of the user's identities; false when the user has none of that id. */
export async function deleteIdentity(db: Db, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('identities')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
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
  const identities = await db
    .selectFrom('identities')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return {
    password: (user?.password_hash ?? null) !== null,
    passkeys: Number(passkeys.n),
    identities: Number(identities.n),
  };
}

/** Locks the user's row for the rest of the transaction (PostgreSQL), so two unlinks cannot both pass the count. */
export async function lockUser(db: Db, userId: string, postgres: boolean): Promise<void> {
  const q = db.selectFrom('users').select('id').where('id', '=', userId);
  await (postgres ? q.forUpdate() : q).executeTakeFirst();
}

/**
 * Accounts (of `role`, when given, and active) whose only ways in are identities of the stored
 * providers: no password, no passkey, and no identity of `keptIssuer` (the `default` provider's,
 * which `POST /idp/verify` keeps serving while the `idp` module is on).
 */
export async function countProviderOnlyAccounts(
  db: Db,
  keptIssuer: string | null,
  role?: 'admin',
): Promise<number> {
  let q = db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('users.password_hash', 'is', null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb.selectFrom('passkeys').select('passkeys.id').whereRef('passkeys.user_id', '=', 'users.id'),
        ),
      ),
    )
    .where((eb) =>
      eb.exists(
        eb.selectFrom('identities').select('identities.id').whereRef('identities.user_id', '=', 'users.id'),
      ),
    );
  if (keptIssuer !== null) {
    q = q.where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('identities')
            .select('identities.id')
            .whereRef('identities.user_id', '=', 'users.id')
            .where('identities.issuer', '=', keptIssuer),
        ),
      ),
    );
  }
  if (role !== undefined) q = q.where('users.role', '=', role).where('users.status', '=', 'active');
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** Active admins. */
export async function countActiveAdmins(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('role', '=', 'admin')
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
