import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { ApiKeysTable, GeneratedPasswordsTable, InvitationsTable } from './schema/accounts.ts';
import type {
  AuditLogTable,
  IdentitiesTable,
  MfaRecoveryCodesTable,
  MfaTokensTable,
  MfaTotpTable,
  OneTimeLinksTable,
  PasskeysTable,
  RateWindowSlotsTable,
  RefreshTokensTable,
  SessionsTable,
  SigningKeysTable,
  ThrottleCountersTable,
  UserCountsTable,
  UserLoginDaysTable,
  UsersTable,
  WebauthnChallengesTable,
} from './schema/identity.ts';
import type {
  AppSecretsTable,
  OauthClientsTable,
  OauthConsentsTable,
  OauthGrantOrganizationsTable,
  OauthModelsTable,
  OauthResourcesTable,
  OauthSessionLinksTable,
} from './schema/oauth.ts';
import type {
  OrganizationDeparturesTable,
  OrganizationDomainsTable,
  OrganizationInvitationsTable,
  OrganizationMemberRolesTable,
  OrganizationMembersTable,
  OrganizationsTable,
  RolesTable,
  UserRolesTable,
} from './schema/organizations.ts';
import type { ModuleOverridesTable, OutboxTable } from './schema/platform.ts';
import type {
  IdpFlowsTable,
  IdpProvidersTable,
  IdTokenUsesTable,
  SamlAssertionUsesTable,
} from './schema/providers.ts';
import type {
  ScimGroupMembersTable,
  ScimGroupsTable,
  ScimTokensTable,
  ScimUsersTable,
} from './schema/sso.ts';
import type { WebhookDeliveriesTable, WebhookEndpointsTable, WebhookEventsTable } from './schema/webhooks.ts';

/*
 * Table shapes shared by both dialects. Timestamps are epoch milliseconds (bigint on PostgreSQL,
 * integer on SQLite) so ordering, ranges and arithmetic are the same on both engines; booleans are
 * 0/1 integers because better-sqlite3 cannot bind JavaScript booleans. The shapes live in schema/,
 * one file per owner (table-owners.ts); `DB` below names every table, and this file re-exports them.
 */

export type * from './schema/accounts.ts';
export type * from './schema/identity.ts';
export type * from './schema/oauth.ts';
export type * from './schema/organizations.ts';
export type * from './schema/platform.ts';
export type * from './schema/providers.ts';
export type * from './schema/sso.ts';
export type * from './schema/webhooks.ts';

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
  scim_tokens: ScimTokensTable;
  scim_users: ScimUsersTable;
  scim_groups: ScimGroupsTable;
  scim_group_members: ScimGroupMembersTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;

/** A database handle or an open transaction: what every query function takes. */
export type Db = Kysely<DB> | Transaction<DB>;
