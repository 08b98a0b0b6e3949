import type { DB } from './schema.ts';

/*
 * Who may write each table (docs/architecture.md, "Tables have owners"): every table of schema.ts
 * → the one folder (with its subfolders) whose code may insert into it, update it or delete from
 * it. Anyone may read any table; a feature that must change another folder's table calls a named
 * change of that folder (`proveMailbox`, `revokeAllSessionRows`, `pruneEvents` …). `npm run deps`
 * (scripts/table-owners.mjs) refuses a write anywhere else under src/, naming the file, the table
 * and its owner. Migrations (src/platform/db/migrations/) make the tables and are not checked, as
 * the SQL-in-query-files rule does not check them. The `satisfies` makes a table added to schema.ts
 * without an owner a type error.
 */
export const TABLE_OWNERS = {
  users: 'src/identity/',
  sessions: 'src/identity/',
  refresh_tokens: 'src/identity/',
  audit_log: 'src/identity/',
  // The webhook event outbox the audit writer fills; the webhooks module fans it out and prunes it
  // through the core's named changes.
  webhook_events: 'src/identity/',
  identities: 'src/identity/',
  signing_keys: 'src/identity/tokens/',
  throttle_counters: 'src/identity/budgets/',
  one_time_links: 'src/identity/links/',
  // Second factors and passkeys: the factor machinery of the identity core.
  mfa_totp: 'src/identity/factors/',
  mfa_recovery_codes: 'src/identity/factors/',
  mfa_tokens: 'src/identity/factors/',
  passkeys: 'src/identity/factors/',
  webauthn_challenges: 'src/identity/factors/',
  // Kept by the users_scale migration's triggers only: no code writes them.
  user_counts: 'src/platform/db/migrations/',
  user_login_days: 'src/platform/db/migrations/',
  module_overrides: 'src/kernel/',
  outbox: 'src/platform/mail/',
  generated_passwords: 'src/modules/auth/',
  invitations: 'src/modules/invitations/',
  id_token_uses: 'src/modules/providers/',
  idp_providers: 'src/modules/providers/',
  idp_flows: 'src/modules/providers/',
  // docs/api.md §23: SAML connections are providers; their replay guard is the providers' too.
  saml_assertion_uses: 'src/modules/providers/',
  app_secrets: 'src/modules/oauth/',
  oauth_clients: 'src/modules/oauth/',
  oauth_resources: 'src/modules/oauth/',
  oauth_consents: 'src/modules/oauth/',
  oauth_models: 'src/modules/oauth/',
  oauth_session_links: 'src/modules/oauth/',
  oauth_grant_organizations: 'src/modules/oauth/',
  webhook_endpoints: 'src/modules/webhooks/',
  webhook_deliveries: 'src/modules/webhooks/',
  // docs/api.md §21; invitations are written from src/modules/organizations/invitations/.
  roles: 'src/modules/organizations/',
  user_roles: 'src/modules/organizations/',
  organizations: 'src/modules/organizations/',
  organization_domains: 'src/modules/organizations/',
  organization_members: 'src/modules/organizations/',
  organization_member_roles: 'src/modules/organizations/',
  organization_departures: 'src/modules/organizations/',
  organization_invitations: 'src/modules/organizations/',
  api_keys: 'src/modules/api-keys/',
  rate_window_slots: 'src/identity/budgets/',
  // docs/api.md §23: SCIM 2.0 provisioning, part of module sso.
  scim_tokens: 'src/modules/sso/',
  scim_users: 'src/modules/sso/',
  scim_groups: 'src/modules/sso/',
  scim_group_members: 'src/modules/sso/',
} as const satisfies Record<keyof DB, string>;
