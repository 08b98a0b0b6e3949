import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * docs/api.md §23 (module `sso`): a provider may be a SAML connection owned by an organization and
 * claiming e-mail domains, and a used SAML assertion id is remembered, shared by every instance,
 * until its latest NotOnOrAfter plus the 60 s skew (replay). The SP-initiated request's state
 * (RelayState, the AuthnRequest id for InResponseTo) lives in `idp_flows`, like any provider's flow.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idp_providers').addColumn('organization_id', 'text').execute();
  await db.schema
    .alterTable('idp_providers')
    .addColumn('domains', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  // JSON: idp_entity_id, idp_sso_url, idp_certificates, attribute_mapping, allow_idp_initiated.
  await db.schema.alterTable('idp_providers').addColumn('saml', 'text').execute();
  await db.schema
    .createTable('saml_assertion_uses')
    // SHA-256 of the IdP's entity id and the assertion's ID: ids are unique per issuer only.
    .addColumn('assertion_key', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', bigintType(dialectOf(db)), (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('saml_assertion_uses_expires_at')
    .on('saml_assertion_uses')
    .column('expires_at')
    .execute();
}

/** Drops the table and the columns again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('saml_assertion_uses').ifExists().execute();
  await db.schema.alterTable('idp_providers').dropColumn('saml').execute();
  await db.schema.alterTable('idp_providers').dropColumn('domains').execute();
  await db.schema.alterTable('idp_providers').dropColumn('organization_id').execute();
}
