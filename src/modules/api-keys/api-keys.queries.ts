import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { DialectName } from '../../platform/db/dialect.ts';
import type { ApiKeysTable, Db, OrganizationsTable, UserRow } from '../../platform/db/schema.ts';

export type ApiKeyRow = Selectable<ApiKeysTable>;

/** Stores a new key (its hash only). */
export async function insertKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/** A key by the hash of the secret, revoked or not. */
export async function findKeyByHash(db: Db, hash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
}

/** A key that is not revoked, by id. */
export async function findUnrevokedKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** The owner's keys that are neither revoked nor expired at `now` (the `key_limit` count). */
export async function countLiveKeys(
  db: Db,
  ownerType: string,
  ownerId: string,
  now: number,
): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner_type', '=', ownerType as 'user')
    .where('owner_id', '=', ownerId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One keyset page of unrevoked keys, newest first; `owner` narrows it to one owner. */
export async function selectKeyPage(
  db: Db,
  q: {
    owner: { type: 'user' | 'organization'; id: string } | null;
    after: { createdAt: number; id: string } | null;
    limit: number;
  },
): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll().where('revoked_at', 'is', null);
  if (q.owner) query = query.where('owner_type', '=', q.owner.type).where('owner_id', '=', q.owner.id);
  if (q.after) {
    const { createdAt, id } = q.after;
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', createdAt),
        eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)]),
      ]),
    );
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
}

/** Marks a key revoked; false when it already was (of two concurrent revocations one wins). */
export async function markRevoked(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Revokes every unrevoked key of an owner; answers the keys it revoked. */
export async function revokeOwnerKeyRows(
  db: Db,
  ownerType: 'user' | 'organization',
  ownerId: string,
  now: number,
): Promise<ApiKeyRow[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .where('revoked_at', 'is', null)
    .execute();
  if (rows.length === 0) return [];
  await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.map((r) => ({ ...r, revoked_at: now }));
}

/**
 * Records a use: at most once a minute per key (docs/api.md §22), one conditional write, so of
 * several instances using the key in the same minute one writes.
 */
export async function touchKey(db: Db, id: string, now: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - 60_000)]))
    .execute();
}

/** The owner user of a key (any status), or undefined when gone. */
export async function findOwnerUser(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Serializes key creation per owner until the transaction ends, so the 100-live-keys limit holds
 * under concurrent creates: an advisory lock on PostgreSQL; SQLite's one writer needs none.
 */
export async function lockOwner(trx: Db, dialect: DialectName, owner: string): Promise<void> {
  if (dialect === 'postgres')
    await sql`select pg_advisory_xact_lock(hashtextextended(${`api_keys:${owner}`}, 0))`.execute(trx);
}

/** An organization's row and its domains (read for the verify answer; the organizations module owns them). */
export async function findOrganizationWithDomains(
  db: Db,
  id: string,
): Promise<{ row: Selectable<OrganizationsTable>; domains: string[] } | undefined> {
  const row = await db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const domains = await db
    .selectFrom('organization_domains')
    .select('domain')
    .where('organization_id', '=', id)
    .orderBy('domain')
    .execute();
  return { row, domains: domains.map((d) => d.domain) };
}

/** Which of these role names the catalogue holds. */
export async function knownRoleNames(db: Db, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await db.selectFrom('roles').select('name').where('name', 'in', names).execute();
  return new Set(rows.map((r) => r.name));
}

/** Organization keys whose organization is gone and that are not revoked yet. */
export async function orphanedOrganizationKeys(db: Db): Promise<Array<{ owner_id: string }>> {
  return db
    .selectFrom('api_keys')
    .select('owner_id')
    .distinct()
    .where('owner_type', '=', 'organization')
    .where('revoked_at', 'is', null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb.selectFrom('organizations').select('id').whereRef('organizations.id', '=', 'api_keys.owner_id'),
        ),
      ),
    )
    .execute();
}
