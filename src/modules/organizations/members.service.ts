import { type AuditEvent, findUserById, recordAudits } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { Db } from '../../platform/db/schema.ts';
import { checkGrantable, type OrgAccess, orgAccess, requirePermission } from './access.ts';
import { type Caller, iso, roleNotFound } from './common.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import {
  findMember,
  insertMember,
  memberRoles,
  otherHolders,
  pageMembers,
  removeMember,
  rolesOfMembers,
  setMemberRoles,
} from './members.queries.ts';
import type { MemberPage, MembersQuery, PublicMember } from './members.schemas.ts';
import { lockOrganization } from './organizations.queries.ts';
import { eventOrganization } from './organizations.service.ts';
import { permissionsOf } from './reads.ts';
import { existingRoleNames } from './roles.queries.ts';

const MANAGE = 'org:members:manage';
const memberNotFound = () => new ApiError('not_found', { detail: 'No such member of this organization' });

/** organizations.members: an admin, or a member holding `org:members:read`; keyset pages by join time. */
export async function listMembers(
  ctx: AppContext,
  id: string,
  query: MembersQuery,
  caller: Caller,
): Promise<MemberPage> {
  const access = await orgAccess(ctx, id, caller);
  requirePermission(access, 'org:members:read');
  const after = query.cursor === undefined ? null : decodeCursor(query.cursor, { j: 'number', u: 'string' });
  const rows = await pageMembers(
    ctx.db,
    id,
    query.limit + 1,
    after && { joinedAt: after.j, userId: after.u },
  );
  const page = rows.slice(0, query.limit);
  const roles = await rolesOfMembers(
    ctx.db,
    id,
    page.map((r) => r.user_id),
  );
  const last = page[page.length - 1];
  return {
    data: page.map((r) => ({
      user: { id: r.user_id, email: r.email, name: r.name, status: r.status },
      roles: roles.get(r.user_id) ?? [],
      joined_at: iso(Number(r.joined_at)),
    })),
    next_cursor:
      rows.length > query.limit && last ? encodeCursor({ j: Number(last.joined_at), u: last.user_id }) : null,
  };
}

/**
 * `last_manager`: the change would leave the organization without a member holding
 * `org:members:manage`. Admins are exempt (the organization is then managed by admins only).
 */
async function checkLastManager(
  ctx: AppContext,
  db: Db,
  access: OrgAccess,
  userId: string,
  rolesAfter: readonly string[],
): Promise<void> {
  if (access.admin) return;
  const before = await permissionsOf(ctx, await memberRoles(db, access.org.id, userId), db);
  if (!before.includes(MANAGE)) return;
  if ((await permissionsOf(ctx, rolesAfter, db)).includes(MANAGE)) return;
  if ((await otherHolders(db, access.org.id, MANAGE, userId)).length > 0) return;
  throw new ApiError('last_manager', {
    detail:
      'This is the last member who manages the organization’s members; give the role to another member first',
  });
}

/** organizations.member_put: 201 added or 200 changed (admin or `org:members:manage`, with the guard). */
export async function putMember(
  ctx: AppContext,
  id: string,
  userId: string,
  roles: readonly string[],
  caller: Caller,
): Promise<{ created: boolean; member: PublicMember }> {
  return ctx.db.transaction().execute(async (trx) => {
    const access = await orgAccess(ctx, id, caller, trx);
    requirePermission(access, MANAGE);
    const known = await existingRoleNames(trx, roles);
    const unknown = roles.find((r) => !known.has(r));
    if (unknown !== undefined) throw roleNotFound(unknown);
    await checkGrantable(ctx, trx, access, roles);
    const user = await findUserById(trx, userId);
    if (!user) throw access.admin ? new ApiError('not_found', { detail: 'No such user' }) : memberNotFound();
    await lockOrganization(trx, id);
    const existing = await findMember(trx, id, userId);
    // A manager who is not an admin changes the roles of members; new people join by invitation
    // (their consent) or by domain, never by a manager naming their user id (any user id: 404).
    if (!existing && !access.admin) throw memberNotFound();
    const now = Date.now();
    const sorted = [...roles].sort();
    if (existing) {
      await checkLastManager(ctx, trx, access, userId, roles);
      await setMemberRoles(trx, id, userId, roles);
    } else {
      await insertMember(trx, id, userId, roles, now);
    }
    await recordAudits(trx, [
      memberEvent(
        existing ? 'organization.member.updated' : 'organization.member.added',
        access,
        userId,
        sorted,
        caller,
      ),
    ]);
    return {
      created: !existing,
      member: {
        user: { id: user.id, email: user.email, name: user.name, status: user.status },
        roles: sorted,
        joined_at: iso(existing ? Number(existing.joined_at) : now),
      },
    };
  });
}

/** organizations.member_delete: an admin, `org:members:manage`, or the member themself (leaving). */
export async function deleteMember(
  ctx: AppContext,
  id: string,
  userId: string,
  caller: Caller,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const access = await orgAccess(ctx, id, caller, trx);
    if (caller.auth.user.id !== userId) requirePermission(access, MANAGE);
    await lockOrganization(trx, id);
    const roles = await memberRoles(trx, id, userId);
    if (!(await findMember(trx, id, userId))) throw memberNotFound();
    await checkLastManager(ctx, trx, access, userId, []);
    await removeMember(trx, id, userId, Date.now());
    await recordAudits(trx, [memberEvent('organization.member.removed', access, userId, roles, caller)]);
  });
}

function memberEvent(
  action: 'organization.member.added' | 'organization.member.updated' | 'organization.member.removed',
  access: OrgAccess,
  userId: string,
  roles: readonly string[],
  caller: Caller,
): AuditEvent {
  return {
    action,
    actor: caller.actor,
    target: { type: 'organization', id: access.org.id },
    client: caller.client,
    details: { organization: eventOrganization(access.org), user_id: userId, roles: [...roles] },
  };
}
