import type { AuditEvent, ClientInfo } from '../../identity/index.ts';
import type { Db } from '../../platform/db/schema.ts';
import { findMember, insertMember, memberRoles, removeMember, setMemberRoles } from './members.queries.ts';
import { domainsOf, findOrganization, lockOrganization } from './organizations.queries.ts';
import { eventOrganization } from './organizations.service.ts';
import { parseNames } from './reads.ts';

/*
 * What SCIM provisioning (module sso, src/modules/sso/scim/, docs/api.md §23) changes of an
 * organization's members: it owns no member rows, so it asks here. Every change runs in the
 * caller's transaction and returns the organization's own event for it (`via: "scim"`), which the
 * caller records with its own. The actor is the system: a token acts for the organization's IdP.
 */

/** An organization as SCIM needs it. */
export interface ScimOrganization {
  id: string;
  slug: string;
  name: string;
  domains: string[];
  /** Whom SCIM adds joins with these (an existing account at the domains, a new person). */
  defaultRoles: string[];
  /** `scim_group_roles`: a group's displayName → roles. */
  groupRoles: Record<string, string[]>;
}

/** The organization of a SCIM token, or null when it is gone. */
export async function scimOrganization(db: Db, id: string): Promise<ScimOrganization | null> {
  const row = await findOrganization(db, id);
  if (!row) return null;
  const domains = (await domainsOf(db, [id])).get(id) ?? [];
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    domains,
    defaultRoles: parseNames(row.default_roles),
    groupRoles: JSON.parse(row.scim_group_roles) as Record<string, string[]>,
  };
}

function event(
  action: 'organization.member.added' | 'organization.member.updated' | 'organization.member.removed',
  org: ScimOrganization,
  userId: string,
  roles: readonly string[],
  client: ClientInfo | null,
): AuditEvent {
  return {
    action,
    actor: { type: 'system' },
    target: { type: 'organization', id: org.id },
    client,
    details: { organization: eventOrganization(org), user_id: userId, roles: [...roles].sort(), via: 'scim' },
  };
}

/** The member's roles there, or null when not a member. */
export async function scimMemberRoles(
  db: Db,
  organizationId: string,
  userId: string,
): Promise<string[] | null> {
  if (!(await findMember(db, organizationId, userId))) return null;
  return memberRoles(db, organizationId, userId);
}

/** Adds a member with roles; null when already one. */
export async function scimJoin(
  trx: Db,
  org: ScimOrganization,
  userId: string,
  roles: readonly string[],
  client: ClientInfo | null,
): Promise<AuditEvent | null> {
  await lockOrganization(trx, org.id);
  if (await findMember(trx, org.id, userId)) return null;
  await insertMember(trx, org.id, userId, [...roles].sort(), Date.now());
  return event('organization.member.added', org, userId, roles, client);
}

/** Sets a member's roles there; null when unchanged or not a member. */
export async function scimSetRoles(
  trx: Db,
  org: ScimOrganization,
  userId: string,
  roles: readonly string[],
  client: ClientInfo | null,
): Promise<AuditEvent | null> {
  const before = await scimMemberRoles(trx, org.id, userId);
  const after = [...new Set(roles)].sort();
  if (before === null || before.join('\n') === after.join('\n')) return null;
  await setMemberRoles(trx, org.id, userId, after);
  return event('organization.member.updated', org, userId, after, client);
}

/**
 * Ends a membership (the IdP deprovisions: no `last_manager` check, admins still manage the
 * organization); null when not a member.
 */
export async function scimLeave(
  trx: Db,
  org: ScimOrganization,
  userId: string,
  client: ClientInfo | null,
): Promise<AuditEvent | null> {
  await lockOrganization(trx, org.id);
  const roles = await memberRoles(trx, org.id, userId);
  if (!(await removeMember(trx, org.id, userId, Date.now()))) return null;
  return event('organization.member.removed', org, userId, roles, client);
}
