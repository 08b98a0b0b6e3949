import type { AuditActor } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { Db } from '../../platform/db/schema.ts';

/*
 * What API keys need of organizations (docs/api.md §21, §22): an organization's object for verify
 * (without `metadata`), membership and `org:settings:manage`, and a user's global roles. Without
 * the organizations module there are no organizations: organization keys cannot be made and
 * verify answers `roles: []`.
 */
export interface OrganizationsPort {
  /** The organization object without `metadata`, or null when there is none by that id. */
  organization(ctx: AppContext, id: string): Promise<Record<string, unknown> | null>;
  /** 'manager': holds org:settings:manage; 'member': a member without it; null: not a member. */
  standing(ctx: AppContext, orgId: string, userId: string): Promise<'manager' | 'member' | null>;
  globalRoles(ctx: AppContext, userId: string): Promise<string[]>;
  /** Gives a new service account its global roles (400 `validation_failed` for an unknown one). */
  setGlobalRoles(ctx: AppContext, trx: Db, userId: string, roles: string[], actor: AuditActor): Promise<void>;
}

const NONE: OrganizationsPort = {
  organization: async () => null,
  standing: async () => null,
  globalRoles: async () => [],
  setGlobalRoles: async () => {
    throw new ApiError('validation_failed', {
      detail: 'body/roles needs the organizations module',
      errors: [{ path: '/roles', message: 'needs the organizations module' }],
    });
  },
};

/** The organizations this build knows of. */
export function organizationsOf(_ctx: AppContext): OrganizationsPort {
  return NONE;
}
