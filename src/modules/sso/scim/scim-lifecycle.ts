import type { Kysely, Transaction } from 'kysely';
import {
  type AuditEvent,
  type ClientInfo,
  findUserById,
  recordAudits,
  revokeSession,
  revokeUserSessions,
  updateUser,
} from '../../../identity/index.ts';
import { endOutstandingLinks } from '../../../identity/links/credential-events.ts';
import type { DB, Db } from '../../../platform/db/schema.ts';
import {
  type ScimOrganization,
  scimJoin,
  scimLeave,
  scimMemberRoles,
  scimSetRoles,
} from '../../organizations/index.ts';
import {
  findScimUser,
  insertScimUser,
  type ScimUserRow,
  sessionsCarrying,
  updateScimUser,
} from './scim.queries.ts';
import { groupedUserIds, groupNamesOf, userIdsWithGroupRoles } from './scim-groups.queries.ts';

/*
 * What SCIM does to a person's standing in an organization (docs/api.md §23, settled details):
 * group roles, deactivation and reactivation. Every function runs in the caller's transaction and
 * records its audit entries (and so its events) there.
 */

const names = (text: string): string[] => JSON.parse(text) as string[];

/** The domain of an address, lower-cased. */
export const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/** Whether the address is at one of the organization's domains (exactly: no subdomains). */
export const atDomains = (org: ScimOrganization, email: string): boolean =>
  org.domains.includes(domainOf(email));

/** The user's SCIM row there, made when SCIM first touches a member (one who joined otherwise, say). */
export async function ensureScimUser(trx: Db, organizationId: string, userId: string): Promise<ScimUserRow> {
  const found = await findScimUser(trx, organizationId, userId);
  if (found) return found;
  const now = Date.now();
  const row: ScimUserRow = {
    organization_id: organizationId,
    user_id: userId,
    external_id: null,
    active: 1,
    saved_roles: '[]',
    group_roles: '[]',
    disabled_account: 0,
    created_at: now,
    updated_at: now,
  };
  await insertScimUser(trx, row);
  return row;
}

/**
 * Gives a member the roles of their groups: a role a group grants is held while in that group and
 * lost on leaving unless another group or a direct grant gives it. `group_roles` remembers the roles
 * only groups gave (a role held directly before a group granted it stays direct). Not a member
 * (deactivated): nothing; reactivation applies them.
 */
export async function applyGroupRoles(
  trx: Db,
  org: ScimOrganization,
  userId: string,
  client: ClientInfo | null,
): Promise<AuditEvent[]> {
  const current = await scimMemberRoles(trx, org.id, userId);
  if (current === null) return [];
  const row = await ensureScimUser(trx, org.id, userId);
  const onlyGroups = names(row.group_roles);
  const direct = current.filter((r) => !onlyGroups.includes(r));
  const fromGroups = new Set(
    (await groupNamesOf(trx, org.id, userId)).flatMap((n) => org.groupRoles[n] ?? []),
  );
  const nowOnlyGroups = [...fromGroups].filter((r) => !direct.includes(r)).sort();
  if (nowOnlyGroups.join('\n') !== onlyGroups.join('\n')) {
    await updateScimUser(trx, org.id, userId, {
      group_roles: JSON.stringify(nowOnlyGroups),
      updated_at: Date.now(),
    });
  }
  const event = await scimSetRoles(trx, org, userId, [...direct, ...nowOnlyGroups], client);
  return event === null ? [] : [event];
}

/** docs/api.md §23: a changed `scim_group_roles` re-applies to the organization's current members. */
export async function reapplyGroupRoles(
  trx: Db,
  org: ScimOrganization,
  client: ClientInfo | null,
): Promise<void> {
  const ids = new Set([
    ...(await groupedUserIds(trx, org.id)),
    ...(await userIdsWithGroupRoles(trx, org.id)),
  ]);
  const events: AuditEvent[] = [];
  for (const id of [...ids].sort()) events.push(...(await applyGroupRoles(trx, org, id, client)));
  await recordAudits(trx, events);
}

/**
 * `active: false` (or delete): the membership ends and with it every session whose grant acts in
 * the organization (`org_id`); an account at the organization's domains is disabled, which ends all
 * its sessions and links. Admin accounts are never disabled by an organization's IdP (its token is
 * the organization's, not the operator's). The direct roles are kept to restore on reactivation.
 */
export async function deactivate(trx: Db, org: ScimOrganization, userId: string, client: ClientInfo | null) {
  const user = await findUserById(trx, userId);
  const current = await scimMemberRoles(trx, org.id, userId);
  if (!user || current === null) return;
  const row = await ensureScimUser(trx, org.id, userId);
  const onlyGroups = names(row.group_roles);
  const direct = current.filter((r) => !onlyGroups.includes(r)).sort();
  const events: AuditEvent[] = [];
  const left = await scimLeave(trx, org, userId, client);
  if (left) events.push(left);
  for (const sessionId of await sessionsCarrying(trx, org.id, userId)) {
    await revokeSession(trx as Kysely<DB>, sessionId, 'organization_left');
    events.push({
      action: 'session.revoke',
      actor: { type: 'system' },
      target: { type: 'session', id: sessionId },
      client,
      details: { user_id: userId, reason: 'organization_left', via: 'scim' },
    });
  }
  let disabled = 0;
  if (atDomains(org, user.email) && user.role !== 'admin' && user.status === 'active') {
    const now = Date.now();
    await updateUser(trx, userId, { status: 'disabled', updated_at: now });
    const revoked = await revokeUserSessions(trx, userId, 'account_disabled');
    await endOutstandingLinks(trx as Transaction<DB>, userId);
    disabled = 1;
    events.push({
      action: 'user.status_change',
      actor: { type: 'system' },
      target: { type: 'user', id: userId },
      client,
      details: { from: 'active', to: 'disabled', sessions_revoked: revoked, via: 'scim' },
    });
  }
  await updateScimUser(trx, org.id, userId, {
    active: 0,
    saved_roles: JSON.stringify(direct),
    group_roles: '[]',
    disabled_account: disabled,
    updated_at: Date.now(),
  });
  await recordAudits(trx, events);
}

/**
 * `active: true` again: the membership comes back with the roles it had (and its groups'). A person
 * SCIM knows whose membership ended another way rejoins with `default_roles`.
 */
export async function reactivate(trx: Db, org: ScimOrganization, userId: string, client: ClientInfo | null) {
  const row = await findScimUser(trx, org.id, userId);
  if (!row || (await scimMemberRoles(trx, org.id, userId)) !== null) return;
  const events: AuditEvent[] = [];
  // Deactivated by SCIM: the roles it had; removed another way (by an admin, or leaving): as new.
  const roles = row.active === 0 ? names(row.saved_roles) : org.defaultRoles;
  const joined = await scimJoin(trx, org, userId, roles, client);
  if (joined) events.push(joined);
  const user = await findUserById(trx, userId);
  if (row.disabled_account === 1 && user?.status === 'disabled') {
    await updateUser(trx, userId, { status: 'active', updated_at: Date.now() });
    events.push({
      action: 'user.status_change',
      actor: { type: 'system' },
      target: { type: 'user', id: userId },
      client,
      details: { from: 'disabled', to: 'active', via: 'scim' },
    });
  }
  await updateScimUser(trx, org.id, userId, {
    active: 1,
    saved_roles: '[]',
    group_roles: '[]',
    disabled_account: 0,
    updated_at: Date.now(),
  });
  events.push(...(await applyGroupRoles(trx, org, userId, client)));
  await recordAudits(trx, events);
}
