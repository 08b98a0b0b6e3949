import type { Migration } from 'kysely/migration';
import * as core from './20261121000000_core.ts';
import * as authPruningIndexes from './20261121013700_auth_pruning_indexes.ts';
import * as audit from './20261121014000_audit.ts';
import * as outboxAttempts from './20261121015000_outbox_attempts.ts';
import * as usersScale from './20261121016000_users_scale.ts';
import * as sessionAmr from './20261125010000_session_amr.ts';
import * as oneTimeLinks from './20261125030000_one_time_links.ts';
import * as secondFactors from './20261125040000_second_factors.ts';
import * as authNotify from './20261125060000_auth_notify.ts';
import * as signingKeyRevocation from './20261126010000_signing_key_revocation.ts';
import * as usersCreatedVia from './20261126040000_users_created_via.ts';
import * as idTokenUses from './20261126040100_id_token_uses.ts';
import * as webhooks from './20261126071000_webhooks.ts';
import * as emailSignin from './20261126072000_email_signin.ts';
import * as providers from './20261126073000_providers.ts';
import * as oauth from './20261126074000_oauth.ts';
import * as invitationLinks from './20261126080000_invitation_links.ts';
import * as oauthSessions from './20261126081000_oauth_sessions.ts';
import * as webhookFanout from './20261126082000_webhook_fanout.ts';
import * as usersSearchProbes from './20261126090000_users_search_probes.ts';
import * as usersNameWords from './20261126150000_users_name_words.ts';
import * as usersEmailTail3 from './20261126170000_users_email_tail3.ts';
import * as generatedPasswords from './20261202050000_generated_passwords.ts';
import * as oauthClientsPkce from './20261202080000_oauth_clients_pkce.ts';
import * as organizations from './20261202100000_organizations.ts';
import * as organizationMemberCount from './20261202100100_organization_member_count.ts';
import * as organizationTokens from './20261202100500_organization_tokens.ts';
import * as apiKeys from './20261202110000_api_keys.ts';
import * as usersLocale from './20261202120000_users_locale.ts';
import * as outboxLanguage from './20261202120100_outbox_language.ts';
import * as sso from './20261202130000_sso.ts';
import * as scim from './20261202140000_scim.ts';
import * as ssoRequired from './20261202140100_sso_required.ts';

/**
 * Every migration, by name. Listed here rather than read from the folder so the same list works
 * from src/ (type stripping) and dist/ (compiled), and a bundler could never drop one.
 * Names are timestamp-prefixed; Kysely applies them in name order.
 */
export const migrations: Record<string, Migration> = {
  '20261121000000_core': core,
  '20261121013700_auth_pruning_indexes': authPruningIndexes,
  '20261121014000_audit': audit,
  '20261121015000_outbox_attempts': outboxAttempts,
  // Landed after the three above; renumbered so databases that applied them accept it in order.
  '20261121016000_users_scale': usersScale,
  '20261125010000_session_amr': sessionAmr,
  '20261125030000_one_time_links': oneTimeLinks,
  '20261125040000_second_factors': secondFactors,
  '20261125060000_auth_notify': authNotify,
  '20261126010000_signing_key_revocation': signingKeyRevocation,
  '20261126040000_users_created_via': usersCreatedVia,
  '20261126040100_id_token_uses': idTokenUses,
  '20261126071000_webhooks': webhooks,
  '20261126072000_email_signin': emailSignin,
  '20261126073000_providers': providers,
  '20261126074000_oauth': oauth,
  '20261126080000_invitation_links': invitationLinks,
  '20261126081000_oauth_sessions': oauthSessions,
  '20261126082000_webhook_fanout': webhookFanout,
  '20261126090000_users_search_probes': usersSearchProbes,
  '20261126150000_users_name_words': usersNameWords,
  '20261126170000_users_email_tail3': usersEmailTail3,
  '20261202050000_generated_passwords': generatedPasswords,
  '20261202080000_oauth_clients_pkce': oauthClientsPkce,
  '20261202100000_organizations': organizations,
  '20261202100100_organization_member_count': organizationMemberCount,
  '20261202100500_organization_tokens': organizationTokens,
  '20261202110000_api_keys': apiKeys,
  '20261202120000_users_locale': usersLocale,
  '20261202120100_outbox_language': outboxLanguage,
  '20261202130000_sso': sso,
  '20261202140000_scim': scim,
  '20261202140100_sso_required': ssoRequired,
};
