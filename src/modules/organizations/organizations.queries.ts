import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { Db, OrganizationsTable } from '../../platform/db/schema.ts';

export type OrganizationRow = Selectable<OrganizationsTable>;

export async function findOrganization(db: Db, id: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Takes the organization's row lock for the rest of the transaction (PostgreSQL; SQLite's writer
 * is one at a time already), so member changes of one organization are decided one after another
 * (`last_manager`, `member_count`). False when there is no such organization.
 */
export async function lockOrganization(db: Db, id: string): Promise<boolean> {
  const r = await db
    .updateTable('organizations')
    .set({ member_count: sql`member_count` })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function insertOrganization(db: Db, row: Insertable<OrganizationsTable>): Promise<void> {
  await db.insertInto('organizations').values(row).execute();
}

export async function updateOrganization(
  db: Db,
  id: string,
  patch: Updateable<OrganizationsTable>,
): Promise<void> {
  await db.updateTable('organizations').set(patch).where('id', '=', id).execute();
}

export async function deleteOrganization(db: Db, id: string): Promise<boolean> {
  const r = await db.deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Slugs equal to `base` or `base-<n>` (for the next free suffix). */
export async function slugsLike(db: Db, base: string): Promise<string[]> {
  const rows = await db
    .selectFrom('organizations')
    .select('slug')
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
    .execute();
  return rows.map((r) => r.slug);
}

export async function slugTaken(db: Db, slug: string, exceptId?: string): Promise<boolean> {
  let q = db.selectFrom('organizations').select('id').where('slug', '=', slug);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** The domains of these organizations, by organization id. */
export async function domainsOf(db: Db, ids: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('organization_domains')
    .selectAll()
    .where('organization_id', 'in', [...ids])
    .orderBy('domain')
    .execute();
  for (const r of rows) out.set(r.organization_id, [...(out.get(r.organization_id) ?? []), r.domain]);
  return out;
}

/** The first of these domains that another organization holds, if any. */
export async function domainHeldElsewhere(
  db: Db,
  domains: readonly string[],
  id: string,
): Promise<string | undefined> {
  if (domains.length === 0) return undefined;
  const row = await db
    .selectFrom('organization_domains')
    .select('domain')
    .where('domain', 'in', [...domains])
    .where('organization_id', '!=', id)
    .executeTakeFirst();
  return row?.domain;
}

export async function replaceDomains(db: Db, id: string, domains: readonly string[]): Promise<void> {
  await db.deleteFrom('organization_domains').where('organization_id', '=', id).execute();
  if (domains.length > 0) {
    await db
      .insertInto('organization_domains')
      .values(domains.map((domain) => ({ domain, organization_id: id })))
      .execute();
  }
}

/**
 * One page of every organization (admin), by id (UUIDv7: creation order), after `afterId`;
 * `q` matches name or slug, case-insensitively, anywhere.
 */
export async function pageOrganizations(
  db: Db,
  limit: number,
  afterId: string | null,
  q: string | null,
): Promise<OrganizationRow[]> {
  let query = db.selectFrom('organizations').selectAll();
  if (afterId !== null) query = query.where('id', '>', afterId);
  if (q !== null) {
    const pattern = `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        sql<boolean>`lower(name) like ${pattern} escape '\\'`,
        sql<boolean>`slug like ${pattern} escape '\\'`,
      ]),
    );
  }
  return query.orderBy('id').limit(limit).execute();
}

/** The organizations of these ids, by id. */
export async function organizationsByIds(db: Db, ids: readonly string[]): Promise<OrganizationRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('organizations')
    .selectAll()
    .where('id', 'in', [...ids])
    .orderBy('id')
    .execute();
}

/** Whether the organization holding this exact domain requires single sign-on (docs/api.md §23). */
export async function ssoRequiredAt(db: Db, domain: string): Promise<boolean> {
  const row = await db
    .selectFrom('organization_domains as d')
    .innerJoin('organizations as o', 'o.id', 'd.organization_id')
    .select('o.sso_required')
    .where('d.domain', '=', domain)
    .executeTakeFirst();
  return row?.sso_required === 1;
}
