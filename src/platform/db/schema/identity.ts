import type { ColumnType } from 'kysely';

// The identity core's tables (src/identity/): accounts, sessions, tokens, links, factors, budgets, audit. Part of schema.ts (the one `DB`).

export type Role = 'admin' | 'user';

/** docs/api.md §22. */
export type UserKind = 'person' | 'service';

export type UserStatus = 'active' | 'invited' | 'disabled';

/** How an account was created (docs/api.md §16); `unknown`: an older row whose origin was not established. */
export type UserOrigin =
  | 'signup'
  | 'admin'
  | 'invitation'
  | 'idp'
  | 'import'
  | 'first_admin'
  | 'scim'
  | 'unknown';

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  role: Role;
  status: UserStatus;
  password_hash: string | null;
  email_verified: number;
  created_at: number;
  updated_at: number;
  last_login_at: number | null;
  created_via: UserOrigin;
  /** docs/api.md §22: a person, or a service account (no e-mail, password or sign-in; keys only). */
  kind: ColumnType<UserKind, UserKind | undefined, UserKind>;
  /** A canonical BCP 47 tag (docs/languages.md) or null: pages and mails then follow the request. */
  locale: string | null;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  revoked_at: number | null;
  revoked_reason: string | null;
  user_agent: string | null;
  ip: string | null;
  /** RFC 8176 authentication methods as a JSON array (`["pwd"]`, `["fed"]`); null: opened before it was kept. */
  amr: string | null;
  /** When the user authenticated (epoch ms): the tokens' `auth_time`, unchanged by refreshes. */
  auth_time: number | null;
  /** The OAuth client of a grant's session (docs/api.md §17); null for sessions of `/api/v1/login`. */
  client_id: string | null;
  /** The browser session a grant's session ends with (a grant without `offline_access`), or null. */
  parent_id: string | null;
}

export interface RefreshTokensTable {
  id: string;
  session_id: string;
  /** SHA-256 of the opaque token; the token itself is never stored. */
  token_hash: string;
  created_at: number;
  expires_at: number;
  rotated_at: number | null;
  /** The successor token pair, encrypted under a key derived from this token (grace-window replays). */
  successor_box: string | null;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: string;
  private_jwk: string;
  created_at: number;
  /** Set when a newer key takes over; the key keeps verifying until this plus the access token TTL. */
  retired_at: number | null;
  /** Set by `gatehouse rotate-keys --revoke`: the key is never loaded again (docs/operations.md). */
  revoked_at: number | null;
}

export interface ThrottleCountersTable {
  key: string;
  count: number;
  window_started_at: number;
}

export interface IdentitiesTable {
  id: string;
  user_id: string;
  issuer: string;
  subject: string;
  email: string | null;
  linked_at: number;
}

export interface AuditLogTable {
  id: string;
  at: number;
  action: string;
  outcome: 'success' | 'failure';
  actor_type: 'user' | 'system' | 'anonymous';
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** JSON object text; never secrets (recordAudit redacts secret-looking keys). */
  details: string;
}

/** What a one-time link is for (docs/api.md §11–12, §20's sign-in pair, §6's invitations). */
export type LinkPurpose = 'password_reset' | 'email_verify' | 'email_change' | 'email_signin' | 'invitation';

/** A mailed one-time link; the token itself is never stored. */
export interface OneTimeLinksTable {
  id: string;
  user_id: string;
  purpose: LinkPurpose;
  /** SHA-256 of the token (base64url). */
  token_hash: string;
  /** The address the link proves: the account's address, or the new one for `email_change`. */
  email: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** Set when a newer link of the purpose was issued, or a reset killed it. */
  replaced_at: number | null;
  /** `email_signin` only: the code's keyed hash (HMAC under SECRETS_KEY), the other half of the pair. */
  code_hash: string | null;
  /** `email_signin` only: code tries reserved so far (docs/api.md §20: 5, then the pair dies). */
  code_tries: number;
}

/** Users per (role, status, creation day); kept in step by triggers (docs/users.md). */
export interface UserCountsTable {
  role: Role;
  status: UserStatus;
  /** created_at / 86400000, integer division. */
  day: number;
  n: number;
}

/** Users per day of their last login; kept in step by triggers. */
export interface UserLoginDaysTable {
  day: number;
  n: number;
}

/** A user's TOTP factor (docs/api.md §13): pending until confirmed, its secret sealed with SECRETS_KEY. */
export interface MfaTotpTable {
  user_id: string;
  secret_box: string;
  created_at: number;
  confirmed_at: number | null;
  pending_expires_at: number | null;
  /** The last time step accepted (-1: none yet); a code is accepted only for a later step. */
  last_step: number;
}

/** One recovery code, stored as a keyed hash; `used_at` is set by the one write that consumes it. */
export interface MfaRecoveryCodesTable {
  id: string;
  user_id: string;
  code_hash: string;
  created_at: number;
  used_at: number | null;
}

/** The `mfa_token` of a sign-in waiting for its second factor (hash only; 5 minutes; 5 tries). */
export interface MfaTokensTable {
  id: string;
  token_hash: string;
  user_id: string;
  first_factor: string;
  created_at: number;
  expires_at: number;
  tries: number;
  used_at: number | null;
}

/** A registered WebAuthn credential. */
export interface PasskeysTable {
  id: string;
  user_id: string;
  /** base64url credential id, unique across users. */
  credential_id: string;
  /** base64url COSE public key. */
  public_key: string;
  counter: number;
  /** JSON array of transports the authenticator reported. */
  transports: string;
  backed_up: number;
  device_type: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** A WebAuthn challenge: 5 minutes, consumed once by a conditional write. */
export interface WebauthnChallengesTable {
  id: string;
  challenge: string;
  purpose: 'register' | 'login' | 'mfa' | 'reset' | 'reauth';
  user_id: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** One slot of an exact sliding window (src/identity/budgets/sliding-window.ts): its last use. */
export interface RateWindowSlotsTable {
  key: string;
  /** 0 … limit − 1, made densely as the window first fills. */
  slot: number;
  at: number;
}
