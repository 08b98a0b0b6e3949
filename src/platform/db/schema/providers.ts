// The outside identity providers' tables (src/modules/providers/), SAML included. Part of schema.ts (the one `DB`).

/** An ID token POST /api/v1/idp/verify accepted (docs/api.md §16): its SHA-256, kept until exp + 60 s. */
export interface IdTokenUsesTable {
  token_hash: string;
  expires_at: number;
}

/** A named external sign-in provider (docs/api.md §18); secrets are sealed boxes (SECRETS_KEY). */
export interface IdpProvidersTable {
  name: string;
  display_name: string;
  kind: string;
  preset: string | null;
  issuer: string;
  client_id: string;
  client_secret_box: string | null;
  private_key_box: string | null;
  /** JSON: preset settings (tenant_id, team_id, key_id). */
  settings: string;
  /** JSON array of scopes. */
  scopes: string;
  enabled: number;
  auto_provision: number;
  link_by_email: number;
  link_admins: number;
  /** JSON array of domains. */
  allowed_domains: string;
  created_at: number;
  updated_at: number;
  /** docs/api.md §23: the organization owning a SAML connection, and the e-mail domains it claims (JSON). */
  organization_id: string | null;
  domains: string;
  /** JSON of a SAML connection's settings (kind `saml`), else null. */
  saml: string | null;
}

/** A SAML assertion that signed someone in (docs/api.md §23), remembered until it could not be valid. */
export interface SamlAssertionUsesTable {
  assertion_key: string;
  expires_at: number;
}

/** The server-side half of a provider redirect (or of its pending second factor), keyed by the cookie's hash. */
export interface IdpFlowsTable {
  browser_hash: string;
  purpose: string;
  provider: string;
  state: string;
  nonce: string;
  verifier_box: string;
  return_to: string;
  user_id: string | null;
  session_id: string | null;
  created_at: number;
  expires_at: number;
}
