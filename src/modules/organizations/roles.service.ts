import { findUserById, recordAudit } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { type Caller, invalid, isAdmin, roleNotFound } from './common.ts';
import { globalRolesOf, membershipsOf, parseNames } from './reads.ts';
import {
  deleteRole,
  existingRoleNames,
  listRoles,
  type RoleRow,
  replaceGlobalRoles,
  roleInUse,
  upsertRole,
} from './roles.queries.ts';
import {
  ORG_PERMISSIONS,
  type PublicRole,
  type PutRoleBody,
  ROLE_NAME,
  type UserRoles,
} from './roles.schemas.ts';

const RESERVED = new Set(['admin', 'user']);
const NAME = new RegExp(ROLE_NAME);

/** A name the catalogue can hold: the pattern, and never Gatehouse's own `admin`/`user`. */
export const isRoleName = (name: string): boolean => NAME.test(name) && !RESERVED.has(name);

const toPublic = (r: RoleRow): PublicRole => ({
  name: r.name,
  description: r.description,
  permissions: parseNames(r.permissions),
});

export async function getRoles(ctx: AppContext): Promise<{ data: PublicRole[] }> {
  return { data: (await listRoles(ctx.db)).map(toPublic) };
}

/** roles.put: 201 created or 200 replaced. */
export async function putRole(
  ctx: AppContext,
  name: string,
  body: PutRoleBody,
  by: Caller,
): Promise<{ created: boolean; role: PublicRole }> {
  if (!isRoleName(name)) {
    throw invalid(
      '/name',
      RESERVED.has(name) ? 'is reserved (admin and user are Gatehouse roles)' : `must match ${ROLE_NAME}`,
    );
  }
  body.permissions.forEach((p, i) => {
    if (p.startsWith('org:') && !(ORG_PERMISSIONS as readonly string[]).includes(p)) {
      throw invalid(
        `/permissions/${i}`,
        `is not one of Gatehouse's own permissions (${ORG_PERMISSIONS.join(', ')})`,
      );
    }
  });
  const description = body.description ?? '';
  const created = await ctx.db.transaction().execute(async (trx) => {
    const made = await upsertRole(trx, name, description, body.permissions, Date.now());
    await recordAudit(trx, {
      action: 'role.put',
      actor: by.actor,
      target: { type: 'role', id: name },
      client: by.client,
      details: { created: made, permissions: body.permissions },
    });
    return made;
  });
  return { created, role: { name, description, permissions: [...body.permissions] } };
}

/** roles.delete: 204, or 409 `role_in_use` while anyone holds it (or an organization hands it out). */
export async function removeRole(ctx: AppContext, name: string, by: Caller): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    if (await roleInUse(trx, name)) {
      throw new ApiError('role_in_use', {
        detail: 'Someone holds this role, or an organization gives it to new members; take it away first',
      });
    }
    if (!(await deleteRole(trx, name))) throw roleNotFound(name);
    await recordAudit(trx, {
      action: 'role.delete',
      actor: by.actor,
      target: { type: 'role', id: name },
      client: by.client,
    });
  });
}

async function userRolesOf(ctx: AppContext, userId: string): Promise<UserRoles> {
  const [roles, memberships] = await Promise.all([globalRolesOf(ctx, userId), membershipsOf(ctx, userId)]);
  return { roles, organizations: memberships.map(({ id, slug, roles: r }) => ({ id, slug, roles: r })) };
}

const userNotFound = () => new ApiError('not_found', { detail: 'No such user' });

/** users.roles: an admin, or the user on their own id. */
export async function getUserRoles(ctx: AppContext, userId: string, by: Caller): Promise<UserRoles> {
  if (!isAdmin(by) && by.auth.user.id !== userId) {
    throw new ApiError('forbidden', { detail: 'Only admins read the roles of other users' });
  }
  if (!(await findUserById(ctx.db, userId))) throw userNotFound();
  return userRolesOf(ctx, userId);
}

/** users.roles_put (admin): sets the global roles; an unknown name is 404 `role_not_found`. */
export async function putUserRoles(
  ctx: AppContext,
  userId: string,
  roles: readonly string[],
  by: Caller,
): Promise<UserRoles> {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await findUserById(trx, userId))) throw userNotFound();
    const known = await existingRoleNames(trx, roles);
    const unknown = roles.find((r) => !known.has(r));
    if (unknown !== undefined) throw roleNotFound(unknown);
    const before = await globalRolesOf(ctx, userId, trx);
    await replaceGlobalRoles(trx, userId, roles);
    await recordAudit(trx, {
      action: 'user.roles_change',
      actor: by.actor,
      target: { type: 'user', id: userId },
      client: by.client,
      details: { from: before, to: [...roles].sort() },
    });
  });
  return userRolesOf(ctx, userId);
}
