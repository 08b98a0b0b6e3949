import type { Role } from './identity.ts';

// Tables of the account features: invitations, generated first-admin passwords, API keys. Part of schema.ts (the one `DB`).

/**
 * What an invitation adds to its link (a `one_time_links` row of purpose `invitation`, same id): the
 * role it grants and who sent it. The token, address, expiry and used/replaced marks are the link's.
 */
export interface InvitationsTable {
  id: string;
  role: Role;
  invited_by: string | null;
}

/** A password the service generated, which serves once (docs/auth.md, "First admin"). */
export interface GeneratedPasswordsTable {
  user_id: string;
  /** The hash it holds for: once the user's password_hash differs, it no longer applies. */
  password_hash: string;
  created_at: number;
}

/** An API key (docs/api.md §22): only its SHA-256 hash is stored. */
export interface ApiKeysTable {
  id: string;
  name: string;
  /** The key's first 12 characters, shown to tell keys apart. */
  prefix: string;
  key_hash: string;
  owner_type: 'user' | 'organization';
  owner_id: string;
  /** JSON array of scopes, or null: everything the owner may do. */
  scopes: string | null;
  expires_at: number | null;
  rate_requests: number | null;
  rate_window_s: number | null;
  last_used_at: number | null;
  created_at: number;
  created_by: string;
  revoked_at: number | null;
}
