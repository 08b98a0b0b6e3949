import type { Db } from '../../../platform/db/schema.ts';

/**
 * The e-mail domains an organization holds (docs/api.md §21), or null when there is no such
 * organization: a SAML connection's `domains` must be among them (§23). A read of the organizations
 * module's tables (anyone may read a table; only its owner writes it).
 */
export async function selectOrganizationDomains(db: Db, organizationId: string): Promise<string[] | null> {
  const org = await db
    .selectFrom('organizations')
    .select('id')
    .where('id', '=', organizationId)
    .executeTakeFirst();
  if (!org) return null;
  const rows = await db
    .selectFrom('organization_domains')
    .select('domain')
    .where('organization_id', '=', organizationId)
    .execute();
  return rows.map((r) => r.domain);
}
