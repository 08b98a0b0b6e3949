import type { Db } from '../../../platform/db/schema.ts';

/** The organization a grant acts in (docs/api.md §21, "Tokens"), or undefined for none. */
export async function findGrantOrganization(db: Db, grantId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('oauth_grant_organizations')
    .select('organization_id')
    .where('grant_id', '=', grantId)
    .executeTakeFirst();
  return row?.organization_id;
}

/** Sets the grant's organization (an authorization naming one, or a refresh switching). */
export async function upsertGrantOrganization(
  db: Db,
  grantId: string,
  organizationId: string,
  now: number,
): Promise<void> {
  await db
    .insertInto('oauth_grant_organizations')
    .values({ grant_id: grantId, organization_id: organizationId, updated_at: now })
    .onConflict((oc) =>
      oc.column('grant_id').doUpdateSet({ organization_id: organizationId, updated_at: now }),
    )
    .execute();
}

/** The grant acts in no organization (an authorization without `organization=`). */
export async function deleteGrantOrganization(db: Db, grantId: string): Promise<void> {
  await db.deleteFrom('oauth_grant_organizations').where('grant_id', '=', grantId).execute();
}
