import type { AuthContext } from '../../http/guard.ts';
import type { AuditActor, ClientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import {
  globalRolesOf,
  holdsPermission,
  membershipIn,
  putUserRoles,
  toPublicOrganization,
} from '../organizations/index.ts';
import { findOrganizationWithDomains, knownRoleNames } from './api-keys.queries.ts';

/*
 * What API keys need of organizations (docs/api.md §21, §22), through the organizations module's
 * index.ts: an organization's object for verify (without `metadata`), membership and
 * `org:settings:manage`, and a user's global roles.
 */
export interface OrganizationsPort {
  /** The organization object without `metadata`, or null when there is none by that id. */
  organization(ctx: AppContext, id: string): Promise<Record<string, unknown> | null>;
  /** 'manager': holds org:settings:manage; 'member': a member without it; null: not a member. */
  standing(ctx: AppContext, orgId: string, userId: string): Promise<'manager' | 'member' | null>;
  globalRoles(ctx: AppContext, userId: string): Promise<string[]>;
  /** 400 `validation_failed` naming an unknown role (checked before anything is written). */
  checkRoles(ctx: AppContext, roles: readonly string[]): Promise<void>;
  /** Gives a new service account its global roles (audited as `user.roles_change`). */
  setGlobalRoles(
    ctx: AppContext,
    userId: string,
    roles: readonly string[],
    by: { auth: AuthContext; actor: AuditActor; client: ClientInfo | null },
  ): Promise<void>;
}

const PORT: OrganizationsPort = {
  async organization(ctx, id) {
    const found = await findOrganizationWithDomains(ctx.db, id);
    if (!found) return null;
    const { metadata: _, ...withoutMetadata } = toPublicOrganization(found.row, found.domains);
    return withoutMetadata;
  },
  async standing(ctx, orgId, userId) {
    if ((await membershipIn(ctx, orgId, userId)) === null) return null;
    return (await holdsPermission(ctx, orgId, userId, 'org:settings:manage')) ? 'manager' : 'member';
  },
  globalRoles: (ctx, userId) => globalRolesOf(ctx, userId),
  async checkRoles(ctx, roles) {
    const known = await knownRoleNames(ctx.db, roles);
    const i = roles.findIndex((r) => !known.has(r));
    if (i >= 0) {
      throw new ApiError('validation_failed', {
        detail: `body/roles/${i} is not a role of the catalogue`,
        errors: [{ path: `/roles/${i}`, message: 'is not a role of the catalogue' }],
      });
    }
  },
  async setGlobalRoles(ctx, userId, roles, by) {
    await putUserRoles(ctx, userId, roles, by);
  },
};

/** The organizations this build knows of. */
export function organizationsOf(_ctx: AppContext): OrganizationsPort {
  return PORT;
}
