import type { Db } from '../../platform/db/schema.ts';

export interface DomainOrganization {
  id: string;
  slug: string;
  name: string;
  default_roles: string;
}

/**
 * The organization that holds this e-mail domain with `join_by_domain` on, when the user is neither
 * a member nor someone who left or was removed. One primary-key lookup on the domain, then two on
 * the pair: cheap enough for every sign-in.
 */
export async function joinableByDomain(
  db: Db,
  domain: string,
  userId: string,
): Promise<DomainOrganization | undefined> {
  const org = await db
    .selectFrom('organization_domains as d')
    .innerJoin('organizations as o', 'o.id', 'd.organization_id')
    .select(['o.id', 'o.slug', 'o.name', 'o.default_roles'])
    .where('d.domain', '=', domain)
    .where('o.join_by_domain', '=', 1)
    .executeTakeFirst();
  if (!org) return undefined;
  const member = await db
    .selectFrom('organization_members')
    .select('user_id')
    .where('organization_id', '=', org.id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (member) return undefined;
  const departed = await db
    .selectFrom('organization_departures')
    .select('user_id')
    .where('organization_id', '=', org.id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return departed ? undefined : org;
}
