// The organizations' tables (src/modules/organizations/): roles, organizations, members, invitations. Part of schema.ts (the one `DB`).
import type { ColumnType, Generated } from 'kysely';

/** docs/api.md §21: the role catalogue. `permissions` is a JSON array of permission names. */
export interface RolesTable {
  name: string;
  description: string;
  permissions: string;
  created_at: number;
  updated_at: number;
}

/** Roles a user holds globally (outside any organization). */
export interface UserRolesTable {
  user_id: string;
  role: string;
}

/** One organization (a customer). JSON text: `default_roles` (array), `metadata` (object). */
export interface OrganizationsTable {
  id: string;
  name: string;
  slug: string;
  join_by_domain: number;
  default_roles: string;
  require_mfa: number;
  /** docs/api.md §23: 1 while other sign-in methods are refused at the organization's domains. */
  sso_required: Generated<number>;
  metadata: string;
  /** docs/api.md §23: JSON object, a SCIM group's displayName → role names. */
  scim_group_roles: ColumnType<string, string | undefined, string>;
  /** Kept in the transaction of every member change. */
  member_count: number;
  created_at: number;
  updated_at: number;
}

/** An e-mail domain an admin vouches for; a domain belongs to at most one organization. */
export interface OrganizationDomainsTable {
  domain: string;
  organization_id: string;
}

export interface OrganizationMembersTable {
  organization_id: string;
  user_id: string;
  joined_at: number;
}

export interface OrganizationMemberRolesTable {
  organization_id: string;
  user_id: string;
  role: string;
}

/** Who left or was removed: joining by domain does not add them back. */
export interface OrganizationDeparturesTable {
  organization_id: string;
  user_id: string;
  left_at: number;
}

export type OrganizationInvitationStatus = 'pending' | 'accepted' | 'revoked' | 'replaced';

/** An invitation to an organization by mail; only the token's hash is stored. */
export interface OrganizationInvitationsTable {
  id: string;
  organization_id: string;
  email: string;
  /** JSON array of role names. */
  roles: string;
  token_hash: string;
  status: OrganizationInvitationStatus;
  expires_at: number;
  created_by: string | null;
  created_at: number;
  used_at: number | null;
}
