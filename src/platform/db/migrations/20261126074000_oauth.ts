import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * The authorization server (docs/api.md §17): registered clients and APIs (resources), the
 * consents people gave, and oidc-provider's own models (codes, tokens, sessions, interactions,
 * grants). A model is stored under the SHA-256 of its id, with the id left out of the payload, so
 * a database dump holds no usable token.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('oauth_clients')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('application_type', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull())
    .addColumn('grant_types', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('resources', 'text', (c) => c.notNull())
    .addColumn('first_party', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('introspection', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('registered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull())
    // AES-256-GCM box of the client secret (SECRETS_KEY); null for public clients.
    .addColumn('secret_box', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('oauth_resources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('identifier', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('access_token_ttl_s', 'integer', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('oauth_consents')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) =>
      c.notNull().references('oauth_clients.client_id').onDelete('cascade'),
    )
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('resources', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('oauth_consents_pk', ['user_id', 'client_id'])
    .execute();

  await db.schema
    .createTable('oauth_models')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('id_hash', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    // Whose and for which client (payload accountId, clientId): a revoked connected app goes at once.
    .addColumn('account_id', 'text')
    .addColumn('client_id', 'text')
    .addColumn('uid_hash', 'text')
    .addColumn('user_code_hash', 'text')
    .addColumn('expires_at', ts)
    .addColumn('consumed_at', ts)
    .addPrimaryKeyConstraint('oauth_models_pk', ['model', 'id_hash'])
    .execute();
  await db.schema.createIndex('oauth_models_grant_idx').on('oauth_models').columns(['grant_id']).execute();
  await db.schema
    .createIndex('oauth_models_uid_idx')
    .on('oauth_models')
    .columns(['model', 'uid_hash'])
    .execute();
  await db.schema.createIndex('oauth_models_expires_idx').on('oauth_models').column('expires_at').execute();
}

/** Drops the tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['oauth_models', 'oauth_consents', 'oauth_resources', 'oauth_clients']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
