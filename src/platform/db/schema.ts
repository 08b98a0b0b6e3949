import type { ColumnType, Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';

/*
 * Table shapes shared by both dialects. Timestamps are epoch milliseconds (bigint on PostgreSQL,
 * integer on SQLite) so ordering, ranges and arithmetic are the same on both engines; booleans are
 * 0/1 integers because better-sqlite3 cannot bind JavaScript booleans.
 */

export type Role = 'admin' | 'user';
/** docs/api.md §22. */
export type UserKind = 'person' | 'service';
export type UserStatus = 'active' | 'invited' | 'disabled';
/** How an account was created (docs/api.md §16); `unknown`: an older row whose origin was not established. */
export type UserOrigin = 'signup' | 'admin' | 'invitation' | 'idp' | 'import' | 'first_admin' | 'unknown';

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

export interface ModuleOverridesTable {
  name: string;
  enabled: number;
  updated_at: number;
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

/**
 * What an invitation adds to its link (a `one_time_links` row of purpose `invitation`, same id): the
 * role it grants and who sent it. The token, address, expiry and used/replaced marks are the link's.
 */
export interface InvitationsTable {
  id: string;
  role: Role;
  invited_by: string | null;
}

export interface OutboxTable {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
  locked_until: number | null;
  locked_by: string | null;
  /** When the last delivery attempt ended (success or failure); null before the first. */
  last_attempt_at: number | null;
  /** The mail's language (its catalog's tag, docs/languages.md); null: English, written before it was kept. */
  lang: string | null;
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

/** Service-wide secrets generated at migration time (e.g. the key that signs list cursors). */
export interface AppSecretsTable {
  name: string;
  value: string;
  created_at: number;
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

/** A password the service generated, which serves once (docs/auth.md, "First admin"). */
export interface GeneratedPasswordsTable {
  user_id: string;
  /** The hash it holds for: once the user's password_hash differs, it no longer applies. */
  password_hash: string;
  created_at: number;
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

/** Every table Kysely knows about. */
/** docs/api.md §19: where events go. `events` is a JSON array of types (or `["*"]`). */
export interface WebhookEndpointsTable {
  id: string;
  url: string;
  description: string;
  events: string;
  enabled: number;
  /** The signing secret (`whsec_…`), sealed with SECRETS_KEY. */
  secret_box: string;
  /** After a rotation: the previous secret, signing too until `previous_secret_until`. */
  previous_secret_box: string | null;
  previous_secret_until: number | null;
  /** The first failed attempt since the last success; null while deliveries succeed. */
  failing_since: number | null;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
}

/** The webhook outbox: one event, written in the transaction of the change it reports. */
export interface WebhookEventsTable {
  id: string;
  type: string;
  /** The JSON body sent to every endpoint. */
  payload: string;
  created_at: number;
  /** 1 until the delivery worker has planned its first attempt to each subscribed endpoint. */
  fanout_pending: number;
}

/** One attempt (planned or made) of one event to one endpoint. */
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt: number;
  status: 'pending' | 'delivered' | 'failed';
  response_code: number | null;
  error: string | null;
  duration_ms: number | null;
  created_at: number;
  next_attempt_at: number | null;
  locked_until: number | null;
  locked_by: string | null;
}

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
  metadata: string;
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

/** One slot of an exact sliding window (src/identity/budgets/sliding-window.ts): its last use. */
export interface RateWindowSlotsTable {
  key: string;
  /** 0 … limit − 1, made densely as the window first fills. */
  slot: number;
  at: number;
}

export interface DB {
  users: UsersTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  signing_keys: SigningKeysTable;
  module_overrides: ModuleOverridesTable;
  throttle_counters: ThrottleCountersTable;
  identities: IdentitiesTable;
  invitations: InvitationsTable;
  outbox: OutboxTable;
  app_secrets: AppSecretsTable;
  user_counts: UserCountsTable;
  user_login_days: UserLoginDaysTable;
  audit_log: AuditLogTable;
  one_time_links: OneTimeLinksTable;
  mfa_totp: MfaTotpTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  generated_passwords: GeneratedPasswordsTable;
  mfa_tokens: MfaTokensTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  id_token_uses: IdTokenUsesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  idp_providers: IdpProvidersTable;
  idp_flows: IdpFlowsTable;
  saml_assertion_uses: SamlAssertionUsesTable;
  oauth_clients: OauthClientsTable;
  oauth_resources: OauthResourcesTable;
  oauth_consents: OauthConsentsTable;
  oauth_models: OauthModelsTable;
  oauth_session_links: OauthSessionLinksTable;
  roles: RolesTable;
  user_roles: UserRolesTable;
  organizations: OrganizationsTable;
  organization_domains: OrganizationDomainsTable;
  organization_members: OrganizationMembersTable;
  organization_member_roles: OrganizationMemberRolesTable;
  organization_departures: OrganizationDeparturesTable;
  organization_invitations: OrganizationInvitationsTable;
  api_keys: ApiKeysTable;
  rate_window_slots: RateWindowSlotsTable;
  oauth_grant_organizations: OauthGrantOrganizationsTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;

/** A database handle or an open transaction: what every query function takes. */
export type Db = Kysely<DB> | Transaction<DB>;
