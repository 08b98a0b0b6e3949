// The SCIM 2.0 tables of module sso (src/modules/sso/scim/, docs/api.md §23). Part of schema.ts (the one `DB`).

/** One bearer token per organization; only its SHA-256 is kept, with its first characters to recognize it. */
export interface ScimTokensTable {
  organization_id: string;
  token_hash: string;
  prefix: string;
  created_at: number;
}

/** What SCIM knows of a person in an organization (member now, or deactivated). JSON text: the role arrays. */
export interface ScimUsersTable {
  organization_id: string;
  user_id: string;
  external_id: string | null;
  active: number;
  saved_roles: string;
  group_roles: string;
  disabled_account: number;
  created_at: number;
  updated_at: number;
}

/** A SCIM group of an organization; its displayName maps to roles through `scim_group_roles`. */
export interface ScimGroupsTable {
  id: string;
  organization_id: string;
  display_name: string;
  external_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface ScimGroupMembersTable {
  group_id: string;
  user_id: string;
}
