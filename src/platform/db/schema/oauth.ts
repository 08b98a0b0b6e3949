// The authorization server's tables (src/modules/oauth/). Part of schema.ts (the one `DB`).

/** Service-wide secrets generated at migration time (e.g. the key that signs list cursors). */
export interface AppSecretsTable {
  name: string;
  value: string;
  created_at: number;
}

/** A client of the authorization server (docs/api.md §17); list fields are JSON arrays. */
export interface OauthClientsTable {
  client_id: string;
  name: string;
  type: 'confidential' | 'public';
  application_type: 'web' | 'native';
  redirect_uris: string;
  post_logout_redirect_uris: string;
  grant_types: string;
  scopes: string;
  resources: string;
  first_party: number;
  introspection: number;
  registered: number;
  /** 0: an admin let this confidential client leave PKCE out (docs/api.md §17), a nonce then required. */
  pkce_required: number;
  token_endpoint_auth_method: string;
  secret_box: string | null;
  created_at: number;
  updated_at: number;
}

/** An API (RFC 8707 resource) tokens may be asked for; `scopes` is JSON `[{name, description}]`. */
export interface OauthResourcesTable {
  id: string;
  identifier: string;
  name: string;
  scopes: string;
  access_token_ttl_s: number;
  /** 1: a user grant gets only the scopes its roles grant as permissions (docs/api.md §21). */
  rbac: number;
  created_at: number;
  updated_at: number;
}

/** The organization an authorization grant acts in (docs/api.md §21, "Tokens"); `grant_id` is its session's id. */
export interface OauthGrantOrganizationsTable {
  grant_id: string;
  organization_id: string;
  updated_at: number;
}

/** What a user allowed a client: scopes (JSON array) and per resource its scopes (JSON object). */
export interface OauthConsentsTable {
  user_id: string;
  client_id: string;
  scopes: string;
  resources: string;
  created_at: number;
  updated_at: number;
}

/** oidc-provider's models, keyed by the SHA-256 of their id (the id is not in the payload). */
export interface OauthModelsTable {
  model: string;
  id_hash: string;
  payload: string;
  grant_id: string | null;
  account_id: string | null;
  client_id: string | null;
  uid_hash: string | null;
  user_code_hash: string | null;
  expires_at: number | null;
  consumed_at: number | null;
}

/** oidc-provider's browser session (SHA-256 of its uid) → the Gatehouse session of its sign-in. */
export interface OauthSessionLinksTable {
  uid_hash: string;
  session_id: string;
}
