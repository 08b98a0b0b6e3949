import type { AuditEvent, ClientInfo } from '../../identity/index.ts';
import type { Db } from '../../platform/db/schema.ts';
import { findMember, insertMember } from './members.queries.ts';
import { findOrganization, lockOrganization } from './organizations.queries.ts';
import { eventOrganization } from './organizations.service.ts';
import { parseNames } from './reads.ts';

/**
 * docs/api.md §23: a person an SSO connection provisions joins the connection's organization with
 * the organization's `default_roles`, in the sign-in's own transaction (a refused sign-in adds no
 * one). Returns the `organization.member.added` entry for the sign-in to record with its own, or
 * null when the organization is gone or the person is a member already.
 */
export async function joinProvisioned(
  trx: Db,
  organizationId: string,
  userId: string,
  client: ClientInfo,
): Promise<AuditEvent | null> {
  const org = await findOrganization(trx, organizationId);
  if (!org || !(await lockOrganization(trx, organizationId))) return null;
  if (await findMember(trx, organizationId, userId)) return null;
  const roles = parseNames(org.default_roles).sort();
  await insertMember(trx, organizationId, userId, roles, Date.now());
  return {
    action: 'organization.member.added',
    actor: { type: 'system' },
    target: { type: 'organization', id: organizationId },
    client,
    details: { organization: eventOrganization(org), user_id: userId, roles, via: 'sso' },
  };
}
